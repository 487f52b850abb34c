/**
 * @module jobs/reconcile-jobs
 * Compares the jobs the server believes are running on a host's agent (its own, and those it keeps
 * for other hosts: job-runner.ts) with the list the agent reports
 * (hello and heartbeat `running_job_ids`). A running job the agent no longer has is `lost`, a
 * status only the server sets. A queued job the agent reports is running: its job.started was lost
 * with a dropped connection. A queued job the agent does not report may still be on its way, so
 * it is left alone for a grace period (`queuedBefore`); one older than that was sent into a
 * socket that died before the agent read it, and the agent (which reports its own queue too)
 * will never run it: it is `lost` as well, so it does not stay "queued" forever.
 */
import { type Database, jobs } from "@fleetback/db";
import { and, eq, inArray, lt, notInArray, sql } from "drizzle-orm";
import { recordJobEnds } from "./job-metrics.js";
import { runsOn } from "./job-runner.js";

export interface ReconcileOutcome {
  lost: string[];
  /** Queued jobs older than the grace period that the agent does not have. */
  neverReceived: string[];
  adopted: string[];
}

export const NEVER_RECEIVED_REASON = "the agent never received this job (its connection dropped)";

/** Which host, the job ids its agent reports, when, why the others are lost, the queued grace. */
type ReconcileArgs = [
  hostId: string,
  runningJobIds: readonly string[],
  now: Date,
  reason: string,
  queuedBefore?: Date,
];

/**
 * Whether the agent's list disagrees with the host's active jobs: one read, so that the common
 * heartbeat (10,000 agents send 333 a second) costs no transaction and no write. The updates
 * below re-check every condition in SQL, so a job that changes between the read and them is safe.
 */
async function disagrees(db: Database, ...[hostId, runningJobIds, , , queuedBefore]: ReconcileArgs) {
  const active = await db
    .select({ id: jobs.id, status: jobs.status, createdAt: jobs.createdAt })
    .from(jobs)
    .where(and(runsOn(hostId), inArray(jobs.status, ["queued", "running"])));
  const reported = new Set(runningJobIds);
  return active.some((job) =>
    job.status === "running"
      ? !reported.has(job.id)
      : reported.has(job.id) || (queuedBefore !== undefined && job.createdAt < queuedBefore),
  );
}

export async function reconcileRunningJobs(db: Database, ...args: ReconcileArgs): Promise<ReconcileOutcome> {
  if (!(await disagrees(db, ...args))) {
    return { lost: [], neverReceived: [], adopted: [] };
  }
  // The jobs ended here are counted for /metrics in the same transaction, so each counts once.
  return db.transaction(async (tx) => {
    const outcome = await endMissingJobs(tx, ...args);
    await recordJobEnds(tx, [...outcome.lost, ...outcome.neverReceived]);
    return outcome;
  });
}

async function endMissingJobs(
  db: Database,
  ...[hostId, runningJobIds, now, reason, queuedBefore]: ReconcileArgs
): Promise<ReconcileOutcome> {
  const ids = [...new Set(runningJobIds)];
  const lost = await db
    .update(jobs)
    .set({ status: "lost", error: reason, finishedAt: now })
    .where(and(runsOn(hostId), eq(jobs.status, "running"), notInArray(jobs.id, ids)))
    .returning({ id: jobs.id });
  const adopted =
    ids.length === 0
      ? []
      : await db
          .update(jobs)
          .set({
            status: "running",
            startedAt: sql`coalesce(${jobs.startedAt}, ${now.toISOString()}::timestamptz)`,
          })
          .where(and(runsOn(hostId), eq(jobs.status, "queued"), inArray(jobs.id, ids)))
          .returning({ id: jobs.id });
  const neverReceived = queuedBefore
    ? await db
        .update(jobs)
        .set({ status: "lost", error: NEVER_RECEIVED_REASON, finishedAt: now })
        .where(
          and(
            runsOn(hostId),
            eq(jobs.status, "queued"),
            lt(jobs.createdAt, queuedBefore),
            ids.length === 0 ? undefined : notInArray(jobs.id, ids),
          ),
        )
        .returning({ id: jobs.id })
    : [];
  return {
    lost: lost.map((row) => row.id),
    neverReceived: neverReceived.map((row) => row.id),
    adopted: adopted.map((row) => row.id),
  };
}
