/**
 * @module jobs/job-queue
 * The host's job queue: jobs run one at a time in arrival order, because two restic processes on
 * one repository mostly wait for each other's lock anyway, and a backup competing with a prune
 * helps nobody. Kinds this agent does not implement are refused on arrival instead of waiting
 * behind a long backup only to fail.
 */
import type { CommandRun } from "@fleetback/protocol";
import { envNameOf, formatTimeout, type JobTimeouts, timeoutOf } from "../config/job-timeouts.js";
import type { Logger } from "../log/logger.js";
import { createErrorCollector } from "../restic/error-collector.js";
import { systemTimers, type Timers } from "../time/timers.js";
import type { JobReporter } from "./job-reporter.js";
import { type JobHandler, type JobHandlers, type JobOutcome, NextJobWaiting } from "./job-types.js";
import { keptRefusal } from "./kept-job.js";

export interface JobQueue {
  submit(command: CommandRun): void;
  cancel(jobId: string): void;
  /** Queued and running jobs, in order: what hello and heartbeat report as running_job_ids. */
  activeJobIds(): string[];
  /** Resolves when nothing is queued or running. */
  idle(): Promise<void>;
  /** Cancels everything (agent shutdown) and resolves once the running job has ended. */
  cancelAll(): Promise<void>;
}

export interface JobQueueOptions {
  handlers: JobHandlers;
  reporter: JobReporter;
  log: Logger;
  /** The longest each kind may run (job-timeouts.ts); absent: the defaults. */
  timeouts?: JobTimeouts;
  timers?: Timers;
}

interface Running {
  command: CommandRun;
  controller: AbortController;
  /** Its job.finished is sent; only its after-finish work runs (not reported as running). */
  finished?: boolean;
}

export function unsupportedKindMessage(kind: string): string {
  return `${kind} is not supported by this agent version`;
}

/**
 * The error of a job stopped at its bound: the bound, and the stderr line that best explains why
 * restic was still busy (a dead repository: its retries and their cause).
 */
export function timeoutError(ms: number, lastError: string | undefined): string {
  const bound = `timed out after ${formatTimeout(ms)}`;
  return lastError === undefined
    ? `${bound}; restic printed no error`
    : `${bound}; last restic error: ${lastError}`;
}

export function createJobQueue(options: JobQueueOptions): JobQueue {
  const { handlers, reporter, log } = options;
  const timers = options.timers ?? systemTimers;
  const queued: CommandRun[] = [];
  let running: Running | undefined;
  let idleWaiters: (() => void)[] = [];

  const handlerOf = (command: CommandRun): JobHandler | undefined =>
    // The map is keyed by kind, so the entry's command type is exactly this command's.
    handlers[command.kind] as JobHandler | undefined;

  const notifyIdle = () => {
    if (running === undefined && queued.length === 0) {
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const resolve of waiters) {
        resolve();
      }
    }
  };

  const execute = async (command: CommandRun, handler: JobHandler, controller: AbortController) => {
    reporter.started(command.job_id, command.kind);
    // What restic said before a timeout, not what it says while being stopped.
    const errors = createErrorCollector();
    const limit = timeoutOf(options.timeouts, command.kind);
    let timedOut: { lastError: string | undefined } | undefined;
    const cancelTimer =
      limit === null
        ? () => {}
        : timers.after(
            limit,
            () => {
              timedOut = { lastError: errors.best() };
              const message = `stopping the job: it ran longer than its maximum of ${formatTimeout(limit)} (${envNameOf(command.kind)} on this agent)`;
              log.warn("job timed out", { job_id: command.job_id, kind: command.kind, timeout_ms: limit });
              reporter.line(command.job_id, "agent", message);
              controller.abort();
            },
            { unref: true },
          );
    let outcome: JobOutcome;
    try {
      outcome = await handler({
        command,
        signal: controller.signal,
        log: (stream, line) => {
          if (timedOut === undefined) {
            errors.observe(stream, line);
          }
          reporter.line(command.job_id, stream, line);
        },
        progress: (progress) => reporter.progress(command.job_id, progress),
      });
    } catch (cause) {
      log.error("job handler failed", { job_id: command.job_id, kind: command.kind, error: String(cause) });
      outcome = { status: "failed", exit_code: null, error: "the agent failed while running the job" };
    } finally {
      cancelTimer();
    }
    if (timedOut !== undefined && limit !== null && outcome.status !== "succeeded") {
      outcome = {
        status: "failed",
        exit_code: outcome.exit_code,
        error: timeoutError(limit, timedOut.lastError),
      };
    } else if (controller.signal.aborted && outcome.status !== "cancelled") {
      outcome = { status: "cancelled", exit_code: outcome.exit_code };
    }
    reporter.finished(command.job_id, outcome);
    log.info("job finished", { job_id: command.job_id, kind: command.kind, status: outcome.status });
    if (outcome.afterFinish !== undefined && running !== undefined) {
      running.finished = true;
      const waiting = queued[0];
      if (waiting !== undefined) {
        preempt(running, waiting);
      }
      try {
        await outcome.afterFinish();
      } catch (cause) {
        log.error("after-finish work failed", {
          job_id: command.job_id,
          kind: command.kind,
          error: String(cause),
        });
      }
    }
  };

  /**
   * A job that arrives while the running one does its after-finish work (bookkeeping the server
   * does not wait for) stops that work rather than waiting behind it: a backup's statistics can
   * take minutes on a large or unreachable repository, and the next backup refreshes them.
   */
  const preempt = (current: Running, next: CommandRun) => {
    if (current.controller.signal.aborted) {
      return;
    }
    log.info("stopping after-finish work: a job is waiting", {
      job_id: current.command.job_id,
      next_job_id: next.job_id,
    });
    current.controller.abort(new NextJobWaiting(next));
  };

  const pump = () => {
    if (running !== undefined) {
      return;
    }
    const command = queued.shift();
    if (command === undefined) {
      notifyIdle();
      return;
    }
    const handler = handlerOf(command);
    if (handler === undefined) {
      pump();
      return;
    }
    const controller = new AbortController();
    running = { command, controller };
    void execute(command, handler, controller).finally(() => {
      running = undefined;
      pump();
    });
  };

  const idle = (): Promise<void> => {
    if (running === undefined && queued.length === 0) {
      return Promise.resolve();
    }
    return new Promise((resolve) => idleWaiters.push(resolve));
  };

  const isKnown = (jobId: string) =>
    running?.command.job_id === jobId || queued.some((c) => c.job_id === jobId);

  return {
    submit(command) {
      if (isKnown(command.job_id)) {
        log.warn("ignored a duplicate command.run", { job_id: command.job_id });
        return;
      }
      const refused =
        handlerOf(command) === undefined ? unsupportedKindMessage(command.kind) : keptRefusal(command);
      if (refused !== undefined) {
        const error = refused;
        log.warn("refused a job", { job_id: command.job_id, kind: command.kind, reason: error });
        reporter.line(command.job_id, "agent", error);
        reporter.finished(command.job_id, { status: "failed", exit_code: null, error });
        return;
      }
      queued.push(command);
      log.info("job queued", { job_id: command.job_id, kind: command.kind, position: queued.length });
      if (running?.finished === true) {
        preempt(running, command);
      }
      pump();
    },
    cancel(jobId) {
      if (running?.command.job_id === jobId && running.finished !== true) {
        log.info("cancelling the running job", { job_id: jobId });
        running.controller.abort();
        return;
      }
      const index = queued.findIndex((command) => command.job_id === jobId);
      if (index === -1) {
        log.warn("command.cancel for a job this agent does not hold", { job_id: jobId });
        return;
      }
      queued.splice(index, 1);
      reporter.line(jobId, "agent", "cancelled before it started");
      reporter.finished(jobId, { status: "cancelled", exit_code: null });
      notifyIdle();
    },
    activeJobIds() {
      const current = running !== undefined && running.finished !== true ? [running.command.job_id] : [];
      return [...current, ...queued.map((command) => command.job_id)];
    },
    idle,
    async cancelAll() {
      for (const command of queued.splice(0)) {
        reporter.finished(command.job_id, {
          status: "cancelled",
          exit_code: null,
          error: "the agent is stopping",
        });
      }
      running?.controller.abort();
      await idle();
    },
  };
}
