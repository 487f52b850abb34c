/**
 * @module jobs/cancel-job
 * An operator's cancel. An active job on a connected host gets `command.cancel`; its status
 * becomes `cancelled` when the agent's job.finished says so. A queued job on an offline host was
 * never started by an agent, so the server cancels it itself and tells the live stream. A
 * finished job cannot be cancelled (409); a running job on an offline host cannot be reached
 * (503) and will be reconciled when its agent reconnects. Either cancel writes the `job.cancel`
 * audit entry; the server's own cancel writes it in the same transaction as the status.
 */
import { ACTIVE_JOB_STATUSES, type Database, type Job, jobs } from "@fleetback/db";
import { and, eq } from "drizzle-orm";
import { type AuditContext, writeAudit } from "../audit/audit.js";
import type { ServerDeps } from "../deps.js";
import { RequestError } from "../errors.js";
import { recordJobEnds } from "./job-metrics.js";
import { getJob } from "./job-queries.js";

export type CancelOutcome =
  /** command.cancel went to the agent; the job's status follows its job.finished. */
  | { kind: "requested"; job: Job }
  /** The server itself set the queued job `cancelled`. */
  | { kind: "cancelled"; job: Job };

export const CANCELLED_BEFORE_START = "cancelled before the agent started it";

type CancelDeps = Pick<ServerDeps, "db" | "hub" | "clock" | "ids" | "log" | "jobEvents">;

function auditCancel(
  db: Database,
  deps: CancelDeps,
  audit: AuditContext,
  outcome: CancelOutcome,
): Promise<void> {
  return writeAudit(db, deps, {
    ...audit,
    action: "job.cancel",
    targetKind: "job",
    targetId: outcome.job.id,
    details: { host_id: outcome.job.hostId, kind: outcome.job.kind, outcome: outcome.kind },
  });
}

export async function cancelJob(
  deps: CancelDeps,
  audit: AuditContext,
  jobId: string,
): Promise<CancelOutcome> {
  const job = await getJob(deps.db, jobId);
  if (!(ACTIVE_JOB_STATUSES as readonly string[]).includes(job.status)) {
    throw new RequestError("conflict", `Job ${job.id} already finished (${job.status}); nothing to cancel.`, {
      details: { status: job.status },
    });
  }
  // A kept job runs on the keeper's agent (keepers/): the cancel goes there.
  if (deps.hub.send(job.runnerHostId ?? job.hostId, "command.cancel", { job_id: job.id })) {
    deps.log.info({ host_id: job.hostId, job_id: job.id }, "job cancel requested");
    const outcome: CancelOutcome = { kind: "requested", job };
    await auditCancel(deps.db, deps, audit, outcome);
    return outcome;
  }
  if (job.status !== "queued") {
    throw new RequestError(
      "unavailable",
      "The host is offline; the running job cannot be cancelled until its agent reconnects.",
    );
  }
  const finishedAt = deps.clock.now();
  const updated = await deps.db.transaction(async (tx) => {
    const [row] = await tx
      .update(jobs)
      .set({ status: "cancelled", finishedAt, error: CANCELLED_BEFORE_START })
      .where(and(eq(jobs.id, job.id), eq(jobs.status, "queued")))
      .returning();
    if (row) {
      await recordJobEnds(tx, [row.id]);
      await auditCancel(tx, deps, audit, { kind: "cancelled", job: row });
    }
    return row;
  });
  if (!updated) {
    // It moved between the read and the update (started or finished): report what it is now.
    const now = await getJob(deps.db, job.id);
    throw new RequestError("conflict", `Job ${job.id} is now ${now.status}; reload and try again.`, {
      details: { status: now.status },
    });
  }
  deps.log.info({ host_id: job.hostId, job_id: job.id }, "queued job cancelled on an offline host");
  for (const err of deps.jobEvents.emit("job.finished", {
    jobId: job.id,
    hostId: job.hostId,
    status: "cancelled",
    exitCode: null,
    error: CANCELLED_BEFORE_START,
    summary: null,
    finishedAt,
  })) {
    deps.log.error({ err, job_id: job.id }, "a job.finished listener failed");
  }
  return { kind: "cancelled", job: updated };
}
