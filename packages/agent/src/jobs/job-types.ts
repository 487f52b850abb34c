/**
 * @module jobs/job-types
 * What a job handler is: one async function per job kind that runs the job to its end and says
 * how it ended. The map of handlers is keyed by every JobKind, so a kind added to the contract is
 * a compile error until someone decides what this agent does with it.
 */

import type {
  CommandRun,
  CommandRunOf,
  FinishedJobStatus,
  JobKind,
  JobSummary,
  LogStreamName,
} from "@fleetback/protocol";
import type { ProgressState } from "../restic/backup-output.js";
import type { Timers } from "../time/timers.js";

export interface JobOutcome {
  status: FinishedJobStatus;
  /** null when the tool never ran or was ended by a signal. */
  exit_code: number | null;
  error?: string;
  summary?: JobSummary;
  /** The repository did not answer (`job.finished.repository_unreachable`, protocol 11). */
  repository_unreachable?: boolean;
  /**
   * Work the job does after its `job.finished` (protocol 9: a backup's raw-data statistics), so
   * the job's recorded time is the tool's. The queue runs it before the next job, so restic's
   * locks never meet, and no longer reports the job as running meanwhile; a job that is queued
   * aborts the run's signal (its reason a NextJobWaiting) and starts once this resolves.
   * Never changes the outcome.
   */
  afterFinish?: () => Promise<void>;
}

export interface JobRun<C extends CommandRun = CommandRun> {
  command: C;
  /** Aborted when the operator cancels the job or the agent shuts down. */
  signal: AbortSignal;
  /** One line of the job's log (`log.stream`); callers pass scrubbed text only. */
  log(stream: LogStreamName, line: string): void;
  /** One `job.progress`; the handler throttles (at most one per second, the first at once). */
  progress(progress: ProgressState): void;
}

export type { ProgressState };

export type JobHandler<C extends CommandRun = CommandRun> = (run: JobRun<C>) => Promise<JobOutcome>;

/** `undefined` = this agent version does not implement the kind; such jobs are refused at once. */
export type JobHandlers = { [K in JobKind]: JobHandler<CommandRunOf<K>> | undefined };

export function failed(error: string, exitCode: number | null = null): JobOutcome {
  return { status: "failed", exit_code: exitCode, error };
}

/** The abort reason of a job's after-finish work stopped because another job is waiting. */
export class NextJobWaiting extends Error {
  constructor(next: Pick<CommandRun, "job_id" | "kind">) {
    super(`job ${next.job_id} (${next.kind}) is waiting to run`);
    this.name = "NextJobWaiting";
  }
}

/** True when the run was cancelled or the agent is stopping: not merely preempted by a next job. */
export function stoppedForGood(signal: AbortSignal): boolean {
  return signal.aborted && !(signal.reason instanceof NextJobWaiting);
}

/**
 * A signal that follows `signal`, but gives a preemption `graceMs` before it takes effect:
 * after-finish work the server counts on (a backup's snapshot list, ~1 s against a healthy
 * repository) still ends when the next job is waiting, and still stops at once on a cancel or the
 * agent's shutdown. A repository that stops answering right after the backup would otherwise hold
 * the next job for the listing's whole 60 s bound (restic 0.18 retries).
 */
export function preemptedAfter(signal: AbortSignal, graceMs: number, timers: Timers): AbortSignal {
  const controller = new AbortController();
  const follow = () => {
    if (stoppedForGood(signal)) {
      controller.abort(signal.reason);
    } else {
      timers.after(graceMs, () => controller.abort(signal.reason), { unref: true });
    }
  };
  if (signal.aborted) {
    follow();
  } else {
    signal.addEventListener("abort", follow, { once: true });
  }
  return controller.signal;
}
