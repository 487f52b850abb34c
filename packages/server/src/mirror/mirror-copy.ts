/**
 * @module mirror/mirror-copy
 * A copy of the host's snapshots to its mirror repository (issue 18, 3-2-1): after every
 * successful backup, and when an operator asks. The copy names the host's newest cached snapshots
 * (at most COPY_SNAPSHOTS_MAX): restic skips the ones the mirror already holds, so a mirror that
 * was down catches up with the next copy, and a shared repository's other hosts are never copied.
 * Only agents of MIRROR_PROTOCOL_VERSION and later are sent a copy: an older one refuses the frame.
 *
 * Since protocol 10 a backup's snapshot list follows its `job.finished`, so the copy after a
 * backup waits for the list that has the new snapshot (createBackupCopies).
 */
import { type ActorKind, type Database, hostCredentials, hosts, type Job, snapshots } from "@fleetback/db";
import { COPY_SNAPSHOTS_MAX, MIRROR_PROTOCOL_VERSION, SHA256_HEX_PATTERN } from "@fleetback/protocol";
import { and, desc, eq, isNotNull, or } from "drizzle-orm";
import type { ServerDeps } from "../deps.js";
import type { DispatchFailure } from "../jobs/dispatch-job.js";
import { type JobAudit, startJob } from "../jobs/start-job.js";
import { activeJobOf } from "../maintenance/maintenance-jobs.js";

export type CopyDeps = Pick<ServerDeps, "db" | "keys" | "log" | "hub" | "clock" | "ids">;

export type CopyOutcome =
  | { ok: true; job: Job }
  | {
      ok: false;
      reason: DispatchFailure | "no_mirror" | "old_agent" | "no_snapshots" | "already_running";
      jobId?: string;
    };

const FULL_ID = new RegExp(SHA256_HEX_PATTERN);

export function speaksMirror(protocolVersion: number | null): boolean {
  return (protocolVersion ?? 0) >= MIRROR_PROTOCOL_VERSION;
}

/** The host's newest cached snapshot ids, newest first. */
async function snapshotIdsToCopy(db: Database, hostId: string): Promise<string[]> {
  const rows = await db
    .select({ id: snapshots.id })
    .from(snapshots)
    // The mirror keeps this host's backups; other machines' in a shared repository are theirs.
    .where(and(eq(snapshots.hostId, hostId), eq(snapshots.isOwn, true)))
    .orderBy(desc(snapshots.time), desc(snapshots.id))
    .limit(COPY_SNAPSHOTS_MAX);
  return rows.map((row) => row.id).filter((id) => FULL_ID.test(id));
}

export async function hasMirror(db: Database, hostId: string): Promise<boolean> {
  const [row] = await db
    .select({ hostId: hostCredentials.hostId })
    .from(hostCredentials)
    .where(and(eq(hostCredentials.hostId, hostId), isNotNull(hostCredentials.mirrorSealed)));
  return row !== undefined;
}

/**
 * Starts a copy job; every reason it cannot is an expected outcome the caller words. `audit`: an
 * operator's copy, audited with its row (jobs/start-job.ts).
 */
export async function copyToMirror(
  deps: CopyDeps,
  hostId: string,
  actor: { kind: ActorKind; userId?: string | null },
  audit?: JobAudit,
): Promise<CopyOutcome> {
  if (!(await hasMirror(deps.db, hostId))) {
    return { ok: false, reason: "no_mirror" };
  }
  const [host] = await deps.db
    .select({ protocolVersion: hosts.protocolVersion })
    .from(hosts)
    .where(eq(hosts.id, hostId));
  if (!speaksMirror(host?.protocolVersion ?? null)) {
    return { ok: false, reason: "old_agent" };
  }
  const active = await activeJobOf(deps.db, hostId, "copy");
  if (active) {
    return { ok: false, reason: "already_running", jobId: active };
  }
  const ids = await snapshotIdsToCopy(deps.db, hostId);
  if (ids.length === 0) {
    return { ok: false, reason: "no_snapshots" };
  }
  return startJob(deps, {
    kind: "copy",
    hostId,
    actor,
    params: { snapshot_count: ids.length, newest_snapshot_id: ids[0] },
    command: (jobId) => ({
      job_id: jobId,
      kind: "copy",
      requires_admin_creds: false,
      copy: { snapshot_ids: ids },
    }),
    offline: "refuse",
    ...(audit === undefined ? {} : { audit }),
  });
}

/**
 * After a successful backup: copy it to the mirror if the host has one. Never throws; a copy that
 * cannot start is logged (the mirror's lag on the host page shows it too).
 */
export async function copyAfterBackup(deps: CopyDeps, hostId: string, backupJobId: string): Promise<void> {
  try {
    const outcome = await copyToMirror(deps, hostId, { kind: "system" });
    if (outcome.ok) {
      deps.log.info({ host_id: hostId, job_id: outcome.job.id, after: backupJobId }, "mirror copy started");
    } else if (outcome.reason !== "no_mirror") {
      deps.log.warn(
        { host_id: hostId, reason: outcome.reason, after: backupJobId },
        "mirror copy not started after a backup",
      );
    }
  } catch (err) {
    deps.log.error({ err, host_id: hostId }, "could not start the mirror copy after a backup");
  }
}

export interface BackupCopies {
  /** After a backup succeeded: copy now if its snapshot is listed, else on the host's next list. */
  afterBackup(
    hostId: string,
    backupJobId: string,
    summary: Record<string, unknown> | undefined,
  ): Promise<void>;
  /** After a host's complete snapshot list was stored: the copy that waited for it starts. */
  afterSnapshots(hostId: string): Promise<void>;
}

/** Whether the host's cached list has the snapshot (a full id, or 0.14's 8-digit short one). */
async function isListed(db: Database, hostId: string, snapshotId: string): Promise<boolean> {
  const [row] = await db
    .select({ id: snapshots.id })
    .from(snapshots)
    .where(
      and(eq(snapshots.hostId, hostId), or(eq(snapshots.id, snapshotId), eq(snapshots.shortId, snapshotId))),
    )
    .limit(1);
  return row !== undefined;
}

/**
 * The copy after each good backup, started once the new snapshot is in the host's cached list.
 * An agent before protocol 10 reports the list before `job.finished`: the copy starts at once. A
 * newer one reports it after: the backup waits here, one per host (a later backup replaces it, and
 * its copy takes the older snapshot too), until the host's next complete list. The wait lives in
 * this process, which holds the host's socket and so gets the list; a restart in between loses it,
 * and the next backup's copy catches up (it names the newest snapshots, not one).
 */
export function createBackupCopies(deps: CopyDeps): BackupCopies {
  const waiting = new Map<string, string>();
  return {
    async afterBackup(hostId, backupJobId, summary) {
      waiting.delete(hostId);
      try {
        if (!(await hasMirror(deps.db, hostId))) {
          return;
        }
        const snapshotId = summary?.snapshot_id;
        if (typeof snapshotId === "string" && !(await isListed(deps.db, hostId, snapshotId))) {
          waiting.set(hostId, backupJobId);
          return;
        }
      } catch (err) {
        deps.log.error({ err, host_id: hostId }, "could not start the mirror copy after a backup");
        return;
      }
      await copyAfterBackup(deps, hostId, backupJobId);
    },
    async afterSnapshots(hostId) {
      const backupJobId = waiting.get(hostId);
      if (backupJobId === undefined) {
        return;
      }
      waiting.delete(hostId);
      await copyAfterBackup(deps, hostId, backupJobId);
    },
  };
}
