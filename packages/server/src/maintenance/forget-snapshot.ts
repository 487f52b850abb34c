/**
 * @module maintenance/forget-snapshot
 * An admin forgets one snapshot of a host: a `forget` job whose `command.run` names the snapshot
 * (`snapshot_ids`, protocol 7) and no policy, so the agent runs `restic forget <id>` and nothing
 * else, then reports the snapshot list as after any forget. Only a snapshot in this host's cache,
 * named by its full id, is accepted: in a repository shared by several hosts a request naming
 * another host's snapshot is refused before anything is sent. An agent older than
 * FORGET_SNAPSHOTS_PROTOCOL_VERSION is never sent it (it would ignore the ids); the operator is
 * told to update it. Audited as `snapshot.forget`.
 */
import { type Database, type Job, type Snapshot, snapshots } from "@fleetback/db";
import { FORGET_SNAPSHOTS_PROTOCOL_VERSION, SHA256_HEX_PATTERN } from "@fleetback/protocol";
import { and, eq } from "drizzle-orm";
import { Type } from "typebox";
import type { AuditContext } from "../audit/audit.js";
import type { ServerDeps } from "../deps.js";
import { conflict, notFound, unavailable } from "../errors.js";
import { requireHost } from "../hosts/require-host.js";
import { startJob } from "../jobs/start-job.js";

const fullId = new RegExp(SHA256_HEX_PATTERN);

/** The confirmation form: the operator types the snapshot's short id. */
export const ForgetSnapshotForm = Type.Object(
  { confirm: Type.String({ maxLength: 64 }) },
  { additionalProperties: false },
);

/** The API body: nothing is required; `confirm`, when given, must name the snapshot too. */
export const ForgetSnapshotBody = Type.Object(
  { confirm: Type.Optional(Type.String({ maxLength: 64 })) },
  { additionalProperties: false },
);

/** The snapshot of this host with this full id, from the cache; 404 otherwise. */
export async function requireHostSnapshot(db: Database, hostId: string, id: string): Promise<Snapshot> {
  const found = fullId.test(id)
    ? await db
        .select()
        .from(snapshots)
        .where(and(eq(snapshots.hostId, hostId), eq(snapshots.id, id)))
        .limit(1)
    : [];
  const snapshot = found[0];
  if (!snapshot) {
    throw notFound(`snapshot: ${id.slice(0, 64)} is not a snapshot of this host (a full 64-digit id)`);
  }
  return snapshot;
}

/** Whether the typed confirmation names the snapshot (its short or full id, case and spaces aside). */
export function confirms(snapshot: Snapshot, typed: string): boolean {
  const value = typed.trim().toLowerCase();
  return value !== "" && (value === snapshot.shortId || value === snapshot.id);
}

export function speaksForgetSnapshots(protocolVersion: number | null): boolean {
  return (protocolVersion ?? 0) >= FORGET_SNAPSHOTS_PROTOCOL_VERSION;
}

export async function forgetSnapshot(
  deps: Pick<ServerDeps, "db" | "keys" | "log" | "hub" | "clock" | "ids">,
  hostId: string,
  snapshotId: string,
  audit: AuditContext,
): Promise<Job> {
  const host = await requireHost(deps.db, hostId);
  const snapshot = await requireHostSnapshot(deps.db, host.id, snapshotId);
  if (!snapshot.isOwn) {
    // A shared repository: the host may read another machine's snapshot, never delete it.
    throw conflict(
      `snapshot: ${snapshot.shortId} was made by another machine (${snapshot.hostname}) in a repository ${host.name} shares; only that machine's own backups may forget it`,
    );
  }
  if (!speaksForgetSnapshots(host.protocolVersion)) {
    throw conflict(
      `snapshot: forgetting one snapshot needs an agent of protocol ${FORGET_SNAPSHOTS_PROTOCOL_VERSION} or later; ${host.name}'s agent speaks ${host.protocolVersion ?? "an unknown protocol"}: update the agent`,
    );
  }
  const sent = await startJob(deps, {
    kind: "forget",
    hostId: host.id,
    actor: { kind: "user", userId: audit.actor.userId },
    params: { snapshot_ids: [snapshot.id] },
    command: (jobId) => ({
      job_id: jobId,
      kind: "forget",
      requires_admin_creds: false,
      forget_groups: [],
      snapshot_ids: [snapshot.id],
    }),
    audit: {
      ...audit,
      action: "snapshot.forget",
      targetKind: "snapshot",
      targetId: snapshot.id,
      details: {
        host_id: host.id,
        short_id: snapshot.shortId,
        time: snapshot.time.toISOString(),
        tags: snapshot.tags,
      },
    },
    offline: "refuse",
  });
  if (!sent.ok) {
    if (sent.reason === "deletion_held") {
      throw conflict(
        `snapshot: forgetting on ${host.name} is held until an admin releases its deletion hold (host page); nothing was forgotten`,
      );
    }
    if (sent.reason === "keeper_offline") {
      throw unavailable(`The keeper of ${host.name}'s repository is offline; nothing was forgotten.`);
    }
    if (sent.reason === "keeper_needs_upgrade" || sent.reason === "admin_credentials_missing") {
      throw conflict(
        sent.reason === "keeper_needs_upgrade"
          ? `snapshot: ${host.name} is protected and its keeper's agent is too old to forget for it; update the keeper`
          : `snapshot: ${host.name} is protected; its keeper forgets with the repository's admin credentials, which are not bound`,
      );
    }
    throw unavailable(`${host.name} is offline; nothing was forgotten.`);
  }
  return sent.job;
}
