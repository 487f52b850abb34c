/**
 * @module jobs/reconcile-jobs
 * Compares the jobs the server believes are running on a host with the list the agent reports
 * (hello and heartbeat `running_job_ids`). A running job the agent no longer has is `lost`
 * (DESIGN "Job statuses"). A queued job the agent reports is running: its job.started was lost
 * with a dropped connection. Queued jobs the agent does not report are left alone: their
 * command may still be on its way.
 */
import { type Database, jobs } from "@fleetback/db";
import { and, eq, inArray, notInArray, sql } from "drizzle-orm";

export interface ReconcileOutcome {
  lost: string[];
  adopted: string[];
}

export async function reconcileRunningJobs(
  db: Database,
  hostId: string,
  runningJobIds: readonly string[],
  now: Date,
  reason: string,
): Promise<ReconcileOutcome> {
  const ids = [...new Set(runningJobIds)];
  const lost = await db
    .update(jobs)
    .set({ status: "lost", error: reason, finishedAt: now })
    .where(and(eq(jobs.hostId, hostId), eq(jobs.status, "running"), notInArray(jobs.id, ids)))
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
          .where(and(eq(jobs.hostId, hostId), eq(jobs.status, "queued"), inArray(jobs.id, ids)))
          .returning({ id: jobs.id });
  return { lost: lost.map((row) => row.id), adopted: adopted.map((row) => row.id) };
}
