/**
 * @module enrolment/announce
 * The agent-initiated route: an agent announces itself with an Ed25519 public key, an operator
 * compares the fingerprint and approves, and the agent collects its bearer token once by
 * signing `fleetback-claim:{pending_id}:{timestamp}` with the matching private key.
 */
import {
  fingerprint,
  openString,
  parsePublicKey,
  randomToken,
  sealString,
  verifySignature,
} from "@fleetback/crypto";
import {
  acquireAdvisoryXactLock,
  type Database,
  hosts,
  type PendingHost,
  pendingHosts,
  type Transaction,
} from "@fleetback/db";
import { and, desc, eq, gt, inArray, isNotNull, isNull, lte } from "drizzle-orm";
import { type AuditContext, writeAudit } from "../audit/audit.js";
import type { Clock } from "../clock.js";
import { RequestError } from "../errors.js";
import { sourceNetwork } from "../http/client-address.js";
import type { Ids } from "../ids.js";
import { createInitialGroup, type HostInfo, insertEnrolledHost } from "./enrol.js";
import type { InitialSchedule } from "./initial-schedule.js";

/**
 * How long an announce waits for an operator, and then (counted again from the approval) for its
 * claim, before it is swept. Short, so rows a flood leaves behind clear themselves within the hour.
 */
export const PENDING_TTL_MS = 60 * 60 * 1000;
export const MAX_PENDING_ROWS = 100;
/** Per source network (see `sourceNetwork`), so one network cannot fill the whole queue. */
export const MAX_PENDING_PER_NETWORK = 10;
export const CLAIM_CLOCK_SKEW_MS = 5 * 60 * 1000;
export const PENDING_SWEEP_PERIOD_MS = 60 * 1000;

type Deps = { db: Database; clock: Clock; ids: Ids; keys: { secret: Uint8Array } };

function claimAad(pendingId: string): string {
  return `pending:${pendingId}`;
}

export function claimMessage(pendingId: string, timestamp: string): string {
  return `fleetback-claim:${pendingId}:${timestamp}`;
}

export interface Announced {
  pendingId: string;
  fingerprint: string;
  hostnameCollision: boolean;
}

const ANNOUNCE_LOCK = "pending-announce";

/** Throws 429 when the queue, or the source network's share of it, is full. */
async function refuseOverCaps(tx: Transaction, now: Date, sourceIp: string | undefined): Promise<void> {
  // At most MAX_PENDING_ROWS rows are in flight, so reading their addresses stays cheap.
  const inFlight = await tx
    .select({ sourceIp: pendingHosts.sourceIp })
    .from(pendingHosts)
    .where(and(isNull(pendingHosts.claimedAt), gt(pendingHosts.expiresAt, now)));
  const network = sourceNetwork(sourceIp);
  const fromNetwork = inFlight.filter((row) => sourceNetwork(row.sourceIp ?? undefined) === network);
  if (inFlight.length >= MAX_PENDING_ROWS) {
    throw new RequestError("rate_limited", "Too many hosts are waiting for approval; try again later.", {
      headers: { "Retry-After": "60" },
    });
  }
  if (fromNetwork.length >= MAX_PENDING_PER_NETWORK) {
    throw new RequestError(
      "rate_limited",
      `Too many hosts from ${network} are waiting for approval; approve or reject them first.`,
      { headers: { "Retry-After": "60" } },
    );
  }
}

export async function announceHost(
  deps: Deps,
  info: HostInfo & { publicKey: string },
  sourceIp: string | undefined,
): Promise<Announced> {
  const parsed = parsePublicKey(info.publicKey);
  if (!parsed.ok) {
    throw new RequestError(
      "invalid",
      `public_key: must be the base64 of exactly 32 bytes of an Ed25519 key (${parsed.reason})`,
    );
  }
  const now = deps.clock.now();
  const pendingId = deps.ids.ulid(now);
  const print = fingerprint(parsed.key);
  const collision = await deps.db.transaction(async (tx) => {
    // Counting and inserting under one lock is what makes the caps hold: without it, concurrent
    // announces (on one replica or several sharing the database) all count before any inserts.
    await acquireAdvisoryXactLock(tx, ANNOUNCE_LOCK);
    await refuseOverCaps(tx, now, sourceIp);
    const named = await tx.select({ id: hosts.id }).from(hosts).where(eq(hosts.name, info.hostname)).limit(1);
    await tx.insert(pendingHosts).values({
      id: pendingId,
      hostname: info.hostname,
      os: info.os,
      arch: info.arch,
      agentVersion: info.agentVersion,
      toolVersion: info.toolVersion,
      publicKey: parsed.key,
      labels: info.labels ?? {},
      fingerprint: print,
      sourceIp: sourceIp?.slice(0, 64),
      createdAt: now,
      expiresAt: new Date(now.getTime() + PENDING_TTL_MS),
    });
    return named.length > 0;
  });
  return { pendingId, fingerprint: print, hostnameCollision: collision };
}

/** One host still waiting for approval, for its approve step; undefined once decided or expired. */
export async function findPendingHost(
  db: Database,
  clock: Clock,
  pendingId: string,
): Promise<PendingHost | undefined> {
  const rows = await db
    .select()
    .from(pendingHosts)
    .where(
      and(
        eq(pendingHosts.id, pendingId),
        isNull(pendingHosts.approvedAt),
        gt(pendingHosts.expiresAt, clock.now()),
      ),
    )
    .limit(1);
  return rows[0];
}

export async function listPendingHosts(db: Database, clock: Clock): Promise<PendingHost[]> {
  return db
    .select()
    .from(pendingHosts)
    .where(and(isNull(pendingHosts.approvedAt), gt(pendingHosts.expiresAt, clock.now())))
    .orderBy(desc(pendingHosts.id));
}

/** What the approve step chose for the host's first group: as a token carries it (issue 35.2). */
export interface ApprovedStart {
  paths: string[];
  schedule: InitialSchedule | null;
}

/**
 * Creates the host, its first group (when paths were chosen) and its agent token; the token
 * waits, sealed, for the agent's claim.
 */
export async function approvePendingHost(
  deps: Deps,
  audit: AuditContext,
  pendingId: string,
  start: ApprovedStart = { paths: [], schedule: null },
): Promise<{ hostId: string }> {
  const now = deps.clock.now();
  const agentToken = randomToken("fba");
  const hostId = deps.ids.ulid(now);
  const approved = await deps.db.transaction(async (tx) => {
    const rows = await tx
      .update(pendingHosts)
      .set({
        approvedAt: now,
        approvedBy: audit.actor.userId,
        expiresAt: new Date(now.getTime() + PENDING_TTL_MS),
        sealedAgentToken: sealString(deps.keys.secret, agentToken, claimAad(pendingId)),
      })
      .where(
        and(eq(pendingHosts.id, pendingId), isNull(pendingHosts.approvedAt), gt(pendingHosts.expiresAt, now)),
      )
      .returning();
    const pending = rows[0];
    if (!pending) {
      return false;
    }
    // The labels are the ones the approver saw on the enrol page before approving.
    await insertEnrolledHost(tx, hostId, pending, agentToken, pending.labels, now);
    await createInitialGroup(tx, deps, hostId, start.paths, start.schedule, now);
    await tx.update(pendingHosts).set({ hostId }).where(eq(pendingHosts.id, pendingId));
    await writeAudit(tx, deps, { ...audit, action: "host.approve", targetKind: "host", targetId: hostId });
    return true;
  });
  if (!approved) {
    throw new RequestError(
      "not_found",
      `No host ${pendingId} is waiting for approval (expired, approved or rejected).`,
    );
  }
  return { hostId };
}

type RejectDeps = Pick<Deps, "db" | "clock" | "ids">;

export async function rejectPendingHost(
  deps: RejectDeps,
  audit: AuditContext,
  pendingId: string,
): Promise<void> {
  await deps.db.transaction(async (tx) => {
    const rows = await tx
      .delete(pendingHosts)
      .where(and(eq(pendingHosts.id, pendingId), isNull(pendingHosts.approvedAt)))
      .returning({ id: pendingHosts.id });
    if (rows.length === 0) {
      throw new RequestError("not_found", `No host ${pendingId} is waiting for approval.`);
    }
    await writeAudit(tx, deps, {
      ...audit,
      action: "pending_host.reject",
      targetKind: "pending_host",
      targetId: pendingId,
    });
  });
}

/** Which waiting hosts a bulk reject removes: named ones, or every one from a source network. */
export type PendingSelection = { ids: string[] } | { sourceNetwork: string };

/** Rejects the selected hosts still waiting for approval; returns the ids that were removed. */
export async function rejectPendingHosts(
  deps: RejectDeps,
  audit: AuditContext,
  selection: PendingSelection,
): Promise<string[]> {
  let ids: string[];
  if ("ids" in selection) {
    ids = selection.ids;
  } else {
    const waiting = await deps.db
      .select({ id: pendingHosts.id, sourceIp: pendingHosts.sourceIp })
      .from(pendingHosts)
      .where(isNull(pendingHosts.approvedAt));
    ids = waiting
      .filter((row) => sourceNetwork(row.sourceIp ?? undefined) === selection.sourceNetwork)
      .map((row) => row.id);
  }
  if (ids.length === 0) {
    return [];
  }
  return deps.db.transaction(async (tx) => {
    const rows = await tx
      .delete(pendingHosts)
      .where(and(inArray(pendingHosts.id, ids), isNull(pendingHosts.approvedAt)))
      .returning({ id: pendingHosts.id });
    // One entry per host, as a single reject writes, so the trail reads the same either way.
    for (const row of rows) {
      await writeAudit(tx, deps, {
        ...audit,
        action: "pending_host.reject",
        targetKind: "pending_host",
        targetId: row.id,
        details:
          "sourceNetwork" in selection
            ? { bulk: true, source_network: selection.sourceNetwork }
            : { bulk: true },
      });
    }
    return rows.map((row) => row.id);
  });
}

export type ClaimResult = { state: "pending" } | { state: "claimed"; hostId: string; agentToken: string };

export async function claimAgentToken(
  deps: Deps,
  pendingId: string,
  proof: { timestamp: string; signature: string },
): Promise<ClaimResult> {
  const now = deps.clock.now();
  const rows = await deps.db.select().from(pendingHosts).where(eq(pendingHosts.id, pendingId)).limit(1);
  const pending = rows[0];
  if (!pending || pending.expiresAt <= now) {
    throw new RequestError(
      "gone",
      "This announce is not pending: it expired, was rejected, or never existed.",
    );
  }
  const at = Date.parse(proof.timestamp);
  if (!Number.isFinite(at) || Math.abs(now.getTime() - at) > CLAIM_CLOCK_SKEW_MS) {
    throw new RequestError("forbidden", "timestamp: must be within 5 minutes of the server's clock");
  }
  const signature = Buffer.from(proof.signature, "base64");
  const message = new TextEncoder().encode(claimMessage(pendingId, proof.timestamp));
  if (!verifySignature(pending.publicKey, message, new Uint8Array(signature))) {
    throw new RequestError("forbidden", "signature: does not match the announced public key");
  }
  if (!pending.approvedAt) {
    return { state: "pending" };
  }
  // Taking the sealed token and clearing it in one statement hands it out exactly once.
  const taken = await deps.db
    .update(pendingHosts)
    .set({ sealedAgentToken: null, claimedAt: now })
    .where(and(eq(pendingHosts.id, pendingId), isNotNull(pendingHosts.sealedAgentToken)))
    .returning({ sealed: pendingHosts.sealedAgentToken });
  const sealed = taken.length > 0 ? pending.sealedAgentToken : null;
  if (!sealed || !pending.hostId) {
    throw new RequestError("gone", "The agent token of this host was already collected.");
  }
  const opened = openString(deps.keys.secret, sealed, claimAad(pendingId));
  if (!opened.ok) {
    throw new Error(`sealed agent token of ${pendingId} does not open: ${opened.reason}`);
  }
  return { state: "claimed", hostId: pending.hostId, agentToken: opened.plaintext };
}

/** Removes announces whose time ran out, approved or not (an approved host stays). */
export async function sweepPendingHosts(db: Database, now: Date): Promise<number> {
  const rows = await db
    .delete(pendingHosts)
    .where(lte(pendingHosts.expiresAt, now))
    .returning({ id: pendingHosts.id });
  return rows.length;
}
