/**
 * @module enrolment/enrol
 * An agent trades a one-time token for a host and a persistent bearer token. The token is burned
 * by one conditional UPDATE, so of two agents racing with the same token exactly one wins; the
 * host, its credentials (re-sealed from the token's hash to the host id) and its first source
 * group are created in the same transaction, so a failure leaves nothing half-made.
 */

import { hashToken, openJson, randomToken } from "@fleetback/crypto";
import {
  type Database,
  enrolmentTokens,
  hostCredentials,
  hosts,
  scheduleSourceGroups,
  schedules,
  sourceGroups,
  type Transaction,
} from "@fleetback/db";
import type { Repository } from "@fleetback/protocol";
import { and, eq, gt, isNull } from "drizzle-orm";
import { writeAudit } from "../audit/audit.js";
import type { Clock } from "../clock.js";
import { RequestError } from "../errors.js";
import { sealHostCredentials } from "../hosts/credentials.js";
import { newHostIdentity } from "../hosts/snapshot-owner.js";
import type { Ids } from "../ids.js";
import { checkLabels, type Labels, labelsOf } from "../labels/label-rules.js";
import { reconcileHosts } from "../policies/policy-apply.js";
import type { InitialSchedule } from "./initial-schedule.js";
import { enrolmentAad } from "./tokens.js";

/** The group created from a token's initial paths (documented in the README). */
export const DEFAULT_GROUP_NAME = "default";

export interface HostInfo {
  hostname: string;
  os: string;
  arch: string;
  agentVersion: string;
  toolVersion: string;
  /** What the install asked for (install.sh --label), already checked. */
  labels?: Labels | undefined;
}

export interface Enrolled {
  hostId: string;
  agentToken: string;
  /** The token made the machine an existing host's successor (issue 38.2): a live old agent must go. */
  replaced: boolean;
}

/**
 * The token's labels win over the install's: the operator who minted it decided them, while the
 * install's come from whoever ran it. Refused (as the request's) if the union is over the limit.
 */
function mergeLabels(token: Labels, install: Labels | undefined): Labels {
  const labels = { ...install, ...labelsOf(token) };
  return checkLabels(labels, "labels");
}

/** One message for invalid, used and expired tokens: the caller learns nothing about which. */
export const REFUSED = "The enrolment token is not valid (it may be wrong, used or expired).";

function isRepository(value: unknown): value is Repository {
  if (!value || typeof value !== "object") {
    return false;
  }
  const record = value as Record<string, unknown>;
  return typeof record.url === "string" && typeof record.password === "string";
}

/** Inserts the host an agent enrols as, described as it reported itself, offline until its first hello. */
export async function insertEnrolledHost(
  tx: Transaction,
  hostId: string,
  info: Omit<HostInfo, "labels">,
  agentToken: string,
  labels: Labels,
  now: Date,
): Promise<void> {
  await tx.insert(hosts).values({
    id: hostId,
    name: info.hostname,
    ...(await newHostIdentity(tx, hostId, info.hostname)),
    os: info.os,
    arch: info.arch,
    agentVersion: info.agentVersion,
    toolVersion: info.toolVersion,
    status: "offline",
    agentTokenHash: hashToken(agentToken),
    labels,
    createdAt: now,
  });
}

/**
 * The host's first source group from the paths it was enrolled or approved with, scheduled and
 * kept as chosen (null: no schedule, by choice; nothing when no paths were given), then what the
 * policies its labels match give it: its first hello finds its whole configuration.
 */
export async function createInitialGroup(
  tx: Transaction,
  deps: { ids: Ids; clock: Clock; keys: { secret: Uint8Array } },
  hostId: string,
  paths: string[],
  initial: InitialSchedule | null,
  now: Date,
): Promise<void> {
  await createFirstGroup(tx, deps, hostId, paths, initial, now);
  await reconcileHosts(tx, deps, [hostId]);
}

async function createFirstGroup(
  tx: Transaction,
  deps: { ids: Ids },
  hostId: string,
  paths: string[],
  initial: InitialSchedule | null,
  now: Date,
): Promise<void> {
  if (paths.length === 0) {
    return;
  }
  const groupId = deps.ids.ulid(now);
  await tx.insert(sourceGroups).values({
    id: groupId,
    hostId,
    name: DEFAULT_GROUP_NAME,
    includes: paths,
    excludes: [],
    retentionPolicy: initial?.retention ?? {},
    createdAt: now,
  });
  if (initial) {
    // The agent's hello gets this as its first schedule.set (version 1).
    const scheduleId = deps.ids.ulid(now);
    await tx
      .insert(schedules)
      .values({ id: scheduleId, hostId, cron: initial.cron, createdAt: now, updatedAt: now });
    await tx.insert(scheduleSourceGroups).values({ scheduleId, sourceGroupId: groupId });
    await tx.update(hosts).set({ scheduleVersion: 1 }).where(eq(hosts.id, hostId));
  }
}

export async function enrolWithToken(
  deps: { db: Database; clock: Clock; ids: Ids; keys: { secret: Uint8Array } },
  token: string,
  info: HostInfo,
): Promise<Enrolled> {
  const now = deps.clock.now();
  const tokenHash = hashToken(token);
  const hostId = deps.ids.ulid(now);
  const agentToken = randomToken("fba");
  const enrolled = await deps.db.transaction(async (tx) => {
    const burned = await tx
      .update(enrolmentTokens)
      .set({ consumedAt: now })
      .where(
        and(
          eq(enrolmentTokens.tokenHash, tokenHash),
          isNull(enrolmentTokens.consumedAt),
          gt(enrolmentTokens.expiresAt, now),
        ),
      )
      .returning();
    const row = burned[0];
    if (!row) {
      return undefined;
    }
    if (row.successorOf !== null) {
      return takeOver(tx, deps, row, info, agentToken, now);
    }
    await insertEnrolledHost(tx, hostId, info, agentToken, mergeLabels(row.labels, info.labels), now);
    if (row.sealedRepository) {
      const opened = openJson(deps.keys.secret, row.sealedRepository, enrolmentAad(tokenHash));
      if (!opened.ok || !isRepository(opened.value)) {
        throw new Error("enrolment blob could not be opened with its token hash");
      }
      await tx.insert(hostCredentials).values({
        hostId,
        repoSealed: sealHostCredentials(deps.keys.secret, hostId, opened.value),
        createdAt: now,
      });
    }
    await createInitialGroup(tx, deps, hostId, row.initialPaths, row.initialSchedule ?? null, now);
    // The blob is no longer needed once re-sealed to the host: drop it so it outlives nothing.
    await tx
      .update(enrolmentTokens)
      .set({ consumedByHostId: hostId, sealedRepository: null })
      .where(eq(enrolmentTokens.id, row.id));
    return { hostId, agentToken, replaced: false };
  });
  if (!enrolled) {
    throw new RequestError("unauthorised", REFUSED);
  }
  return enrolled;
}

/**
 * The machine enrolling with a successor token becomes the host it names (issue 38.2): the same
 * row, so its name, labels, groups, schedules, repository credentials and snapshot history (and
 * the hostname its backups are made under) carry over, and its first hello gets them all. What
 * described the old machine is the new one's; the old agent's token stops working at once.
 * Its jobs still marked running end as lost at the new agent's hello, which names none of them.
 */
async function takeOver(
  tx: Transaction,
  deps: { ids: Ids; clock: Clock },
  token: typeof enrolmentTokens.$inferSelect,
  info: HostInfo,
  agentToken: string,
  now: Date,
): Promise<Enrolled | undefined> {
  const hostId = token.successorOf as string;
  const [old] = await tx.select().from(hosts).where(eq(hosts.id, hostId)).for("update");
  if (!old) {
    // Deleting the host deletes its successor tokens; one burned in the same instant finds none.
    return undefined;
  }
  await tx
    .update(hosts)
    .set({
      agentTokenHash: hashToken(agentToken),
      reportedHostname: info.hostname,
      os: info.os,
      arch: info.arch,
      agentVersion: info.agentVersion,
      toolVersion: info.toolVersion,
      protocolVersion: null,
      status: "offline",
      scheduleAckedVersion: 0,
      updateVersion: null,
      updateState: null,
      updateError: null,
      updateRequestedAt: null,
      updateStateAt: null,
      refusedProtocolVersion: null,
      refusedAt: null,
      updatedAt: now,
    })
    .where(eq(hosts.id, hostId));
  await tx.update(enrolmentTokens).set({ consumedByHostId: hostId }).where(eq(enrolmentTokens.id, token.id));
  await writeAudit(tx, deps, {
    actor: "agent",
    action: "host.replace",
    targetKind: "host",
    targetId: hostId,
    details: {
      name: old.name,
      token_id: token.id,
      minted_by: token.createdBy,
      predecessor: {
        hostname: old.reportedHostname,
        os: old.os,
        arch: old.arch,
        agent_version: old.agentVersion,
        last_seen_at: old.lastSeenAt?.toISOString() ?? null,
      },
      successor: { hostname: info.hostname, os: info.os, arch: info.arch, agent_version: info.agentVersion },
    },
  });
  return { hostId, agentToken, replaced: true };
}
