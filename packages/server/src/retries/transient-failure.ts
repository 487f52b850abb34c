/**
 * @module retries/transient-failure
 * A backup that failed for a passing reason (restic exit 1 with a lock or
 * connection error, a repository the agent found unreachable, or the agent went away: `lost`) is
 * queued for another try while the group's retry_max allows. Called by the job report sink after
 * a job.finished or a lost job is stored. An unreachable repository's retry is not silent: its
 * `repository_unreachable` alert opens at once (alerts/repository-alerts.ts), and the retry, after
 * the group's backoff, is what brings the backup back once the repository answers.
 */
import { type Database, jobs, sourceGroups } from "@fleetback/db";
import { eq } from "drizzle-orm";
import type { Clock } from "../clock.js";
import type { Ids } from "../ids.js";
import type { Logger } from "../log.js";
import { queuePendingRun } from "./pending-runs.js";
import { runCapsFromParams } from "./run-caps.js";

const TRANSIENT_ERROR = /lock|connection|timeout|unreachable|refused/i;

export function isTransientFailure(job: {
  status: string;
  exitCode: number | null;
  error: string | null;
  /** The agent stopped restic (exit code null or 130) because the repository did not answer. */
  repositoryUnreachable?: boolean;
}): boolean {
  if (job.status === "lost" || (job.status === "failed" && job.repositoryUnreachable === true)) {
    return true;
  }
  return job.status === "failed" && job.exitCode === 1 && TRANSIENT_ERROR.test(job.error ?? "");
}

/** Queues a retry of a finished backup job when it failed transiently; never throws. */
export async function queueRetryAfterFailure(
  deps: { db: Database; clock: Clock; ids: Ids; log: Logger },
  jobId: string,
  report: { repositoryUnreachable?: boolean } = {},
): Promise<string | undefined> {
  try {
    const [row] = await deps.db
      .select({ job: jobs, group: sourceGroups })
      .from(jobs)
      .innerJoin(sourceGroups, eq(sourceGroups.id, jobs.sourceGroupId))
      .where(eq(jobs.id, jobId));
    if (row?.job.kind !== "backup" || !isTransientFailure({ ...row.job, ...report })) {
      return undefined;
    }
    const retry = row.job.params.retry;
    const queued = await queuePendingRun(deps, {
      hostId: row.job.hostId,
      group: row.group,
      actorKind: row.job.actorKind,
      actorUserId: row.job.actorUserId,
      scheduleId: row.job.scheduledId,
      attemptsMade: typeof retry === "number" ? retry : 0,
      lastJobId: row.job.id,
      reason: row.job.error ?? row.job.status,
      runCaps: runCapsFromParams(row.job.params),
    });
    if (queued) {
      deps.log.info(
        { host_id: row.job.hostId, job_id: jobId, pending_run_id: queued.id },
        "backup failed transiently; queued for retry",
      );
    }
    return queued?.id;
  } catch (err) {
    deps.log.error({ err, job_id: jobId }, "could not queue a retry of a failed backup");
    return undefined;
  }
}
