/**
 * @module jobs/job-reports
 * What the agent tells the server about its jobs: job.started, job.progress, log.stream and
 * job.finished. Every update names both the job and the sending host in its WHERE clause, so an
 * agent can only move its own host's jobs; and only active jobs move, so a late or repeated
 * job.finished never rewrites a result.
 */
import { type Database, type JobKind, jobs } from "@fleetback/db";
import {
  type JobFinished,
  type JobProgress,
  type JobStarted,
  type LogStream,
  PROGRESS_MIN_INTERVAL_MS,
  type Timers,
} from "@fleetback/protocol";
import { and, eq, inArray } from "drizzle-orm";
import { createJobAlerts, type JobAlertDeps, type JobAlerts } from "../alerts/job-alerts.js";
import type { Clock } from "../clock.js";
import { recordJobEvidence } from "../evidence/evidence-record.js";
import type { Ids } from "../ids.js";
import { recordKeptSuccess } from "../keepers/kept-success.js";
import type { Logger } from "../log.js";
import { queueRetryAfterFailure } from "../retries/transient-failure.js";
import type { JobEventMap, JobEventName, JobEvents } from "./job-events.js";
import { createJobLogWriter } from "./job-log-writer.js";
import { recordJobEnds } from "./job-metrics.js";
import { runsOn } from "./job-runner.js";

/** `error` is "short text" on the wire; a longer one is cut before it reaches the database. */
export const MAX_JOB_ERROR_LENGTH = 2_000;

export interface JobReportsOptions {
  db: Database;
  log: Logger;
  clock: Clock;
  ids: Ids;
  events: JobEvents;
  /** Raises or resolves the alert of every job that ends. */
  alerts: JobAlerts;
  /**
   * Runs after a job succeeded and its end is stored (a backup's copy to the mirror, the mirror's
   * upkeep after a forget, prune or check); must not throw.
   */
  afterSuccess?: (
    hostId: string,
    job: { id: string; kind: JobKind; params: Record<string, unknown> },
    summary: JobFinished["summary"],
  ) => Promise<void>;
  /**
   * Runs after a host's complete snapshot list is stored (since protocol 10 a backup's list comes
   * after its `job.finished`: the mirror copy waits for it); must not throw.
   */
  afterSnapshots?: (hostId: string) => Promise<void>;
  timers?: Timers;
  logFlushIntervalMs?: number;
  logBatchLines?: number;
}

export interface JobReports {
  started(hostId: string, report: JobStarted): Promise<void>;
  progress(hostId: string, report: JobProgress): Promise<void>;
  logLine(hostId: string, report: LogStream): void;
  finished(hostId: string, report: JobFinished): Promise<void>;
  /** Announces jobs the server itself ended as `lost` (see reconcile-jobs.ts). */
  lost(hostId: string, jobIds: readonly string[], reason: string, at: Date): Promise<void>;
  /** The host's complete snapshot list was stored. */
  snapshotsStored(hostId: string): Promise<void>;
  close(): Promise<void>;
}

const ACTIVE = ["queued", "running"] as const;

/** A restore of another host's snapshot (restore/restore-jobs.ts) names that host in its alert. */
function fromHostOf(params: Record<string, unknown>): { fromHostName?: string } {
  return typeof params.from_host_name === "string" ? { fromHostName: params.from_host_name } : {};
}

/**
 * A server's job reports: its deps give the stores and the events, and every job that ends raises
 * or resolves its alert. `extras` are the hooks and timers the caller wires in.
 */
export function createServerJobReports(
  deps: JobAlertDeps & { jobEvents: JobEvents },
  extras: Omit<JobReportsOptions, "db" | "log" | "clock" | "ids" | "events" | "alerts"> = {},
): JobReports {
  return createJobReports({
    db: deps.db,
    log: deps.log,
    clock: deps.clock,
    ids: deps.ids,
    events: deps.jobEvents,
    alerts: createJobAlerts(deps),
    ...extras,
  });
}

export function createJobReports(options: JobReportsOptions): JobReports {
  const { db, log, clock, ids, events } = options;
  const logWriter = createJobLogWriter({
    db,
    log,
    events,
    ...(options.timers ? { timers: options.timers } : {}),
    ...(options.logFlushIntervalMs ? { flushIntervalMs: options.logFlushIntervalMs } : {}),
    ...(options.logBatchLines ? { batchLines: options.logBatchLines } : {}),
  });
  /** Jobs whose owner is confirmed, with the time of their last stored progress. */
  const progressWrites = new Map<string, { sender: string; hostId: string; at: number }>();

  function emit<K extends JobEventName>(name: K, event: JobEventMap[K]): void {
    for (const err of events.emit(name, event)) {
      log.error({ err, job_id: event.jobId }, `a ${name} listener failed`);
    }
  }

  /** An active job that `sender`'s agent runs: its own, or one it keeps for another host (keepers/). */
  function ownActiveJob(sender: string, jobId: string) {
    return and(eq(jobs.id, jobId), runsOn(sender), inArray(jobs.status, [...ACTIVE]));
  }

  /**
   * Updates the sender's active job `jobId` (of `kind`, when given); its host, or undefined when
   * the sender has no such job: a report for another host's job or a late one, logged at `level`.
   */
  async function updateOwnJob(
    sender: string,
    jobId: string,
    set: Partial<typeof jobs.$inferInsert>,
    ignored: { level: "warn" | "debug"; message: string; kind?: JobKind },
  ) {
    const kind = ignored.kind === undefined ? undefined : eq(jobs.kind, ignored.kind);
    const [row] = await db
      .update(jobs)
      .set(set)
      .where(and(ownActiveJob(sender, jobId), kind))
      .returning({ hostId: jobs.hostId });
    if (row === undefined) {
      log[ignored.level]({ host_id: sender, job_id: jobId }, ignored.message);
    }
    return row;
  }

  return {
    async started(hostId, report) {
      const startedAt = new Date(report.started_at);
      const started = await updateOwnJob(
        hostId,
        report.job_id,
        { status: "running", startedAt },
        {
          level: "warn",
          message: "job.started for no active job of this host and kind; ignored",
          kind: report.kind,
        },
      );
      if (started === undefined) {
        return;
      }
      emit("job.updated", { jobId: report.job_id, hostId: started.hostId, status: "running", startedAt });
    },

    async progress(hostId, report) {
      const now = clock.now().getTime();
      const known = progressWrites.get(report.job_id);
      // Stored progress only serves page reloads (the live stream gets every report): written at
      // the agent's own pace, never more often.
      if (known && known.sender === hostId && now - known.at < PROGRESS_MIN_INTERVAL_MS) {
        emit("job.updated", { jobId: report.job_id, hostId: known.hostId, progress: report });
        return;
      }
      const updated = await updateOwnJob(
        hostId,
        report.job_id,
        { progress: { ...report } },
        { level: "debug", message: "job.progress for no active job of this host; ignored" },
      );
      if (updated === undefined) {
        return;
      }
      progressWrites.set(report.job_id, { sender: hostId, hostId: updated.hostId, at: now });
      emit("job.updated", { jobId: report.job_id, hostId: updated.hostId, progress: report });
    },

    logLine(hostId, report) {
      logWriter.append(hostId, report);
    },

    async finished(sender, report) {
      // Lines come before the result, so a page that sees "finished" finds the whole log stored.
      const logEndSeq = await logWriter.finish(sender, report.job_id);
      const finishedAt = clock.now();
      const error = report.error === undefined ? null : report.error.slice(0, MAX_JOB_ERROR_LENGTH);
      const rows = await db.transaction(async (tx) => {
        const ended = await tx
          .update(jobs)
          .set({
            status: report.status,
            exitCode: report.exit_code,
            error,
            summary: report.summary ?? null,
            finishedAt,
            logEndSeq: logEndSeq ?? null,
          })
          .where(ownActiveJob(sender, report.job_id))
          .returning({
            hostId: jobs.hostId,
            id: jobs.id,
            kind: jobs.kind,
            sourceGroupId: jobs.sourceGroupId,
            params: jobs.params,
          });
        await recordJobEnds(
          tx,
          ended.map((row) => row.id),
        );
        await recordJobEvidence(
          tx,
          ended.map((row) => row.id),
          finishedAt,
        );
        return ended;
      });
      progressWrites.delete(report.job_id);
      const [ended] = rows;
      if (ended === undefined) {
        log.warn(
          { host_id: sender, job_id: report.job_id },
          "job.finished for no active job of this host; ignored",
        );
        return;
      }
      // The job's own host from here on: a keeper's report is about the host it keeps.
      const hostId = ended.hostId;
      log.info({ host_id: hostId, job_id: report.job_id, status: report.status }, "job finished");
      const repositoryUnreachable = report.status === "failed" && report.repository_unreachable === true;
      const retry =
        report.status === "failed"
          ? await queueRetryAfterFailure({ db, clock, ids, log }, report.job_id, { repositoryUnreachable })
          : undefined;
      const [job] = rows;
      if (job) {
        await options.alerts.jobEnded({
          jobId: job.id,
          hostId,
          kind: job.kind,
          sourceGroupId: job.sourceGroupId,
          onMirror: job.params.on_mirror === true,
          ...fromHostOf(job.params),
          status: report.status,
          exitCode: report.exit_code,
          error,
          retryQueued: retry !== undefined,
          repositoryUnreachable,
        });
        if (report.status === "succeeded" && sender !== hostId) {
          await recordKeptSuccess(db, { hostId, kind: job.kind, params: job.params }, finishedAt).catch(
            (err: unknown) =>
              log.error({ err, host_id: hostId, job_id: job.id }, "recording a kept job failed"),
          );
        }
        if (report.status === "succeeded") {
          await options.afterSuccess?.(hostId, job, report.summary);
        }
      }
      emit("job.finished", {
        jobId: report.job_id,
        hostId,
        status: report.status,
        exitCode: report.exit_code,
        error,
        summary: report.summary ?? null,
        finishedAt,
      });
    },

    async lost(sender, jobIds, reason, finishedAt) {
      for (const jobId of jobIds) {
        await logWriter.finish(sender, jobId);
        progressWrites.delete(jobId);
        log.warn({ host_id: sender, job_id: jobId, reason }, "job lost");
        const retry = await queueRetryAfterFailure({ db, clock, ids, log }, jobId);
        const [job] = await db
          .select({
            hostId: jobs.hostId,
            kind: jobs.kind,
            sourceGroupId: jobs.sourceGroupId,
            params: jobs.params,
          })
          .from(jobs)
          .where(eq(jobs.id, jobId));
        // A kept job is lost by its keeper, and is the kept host's job.
        const hostId = job?.hostId ?? sender;
        if (job) {
          await options.alerts.jobEnded({
            jobId,
            hostId,
            kind: job.kind,
            sourceGroupId: job.sourceGroupId,
            onMirror: job.params.on_mirror === true,
            ...fromHostOf(job.params),
            status: "lost",
            exitCode: null,
            error: reason,
            retryQueued: retry !== undefined,
          });
        }
        emit("job.finished", {
          jobId,
          hostId,
          status: "lost",
          exitCode: null,
          error: reason,
          summary: null,
          finishedAt,
        });
      }
    },

    snapshotsStored: async (hostId) => {
      await options.afterSnapshots?.(hostId);
    },

    close: () => logWriter.close(),
  };
}
