import type { CommandRun } from "@fleetback/protocol";
import { createUlidGenerator } from "@fleetback/protocol";
import { createManualTimers } from "@fleetback/protocol/manual-timers";
import { describe, expect, it } from "vitest";
import { createMemoryLogger } from "../testing/memory-logger.js";
import { createJobQueue } from "./job-queue.js";
import type { JobReporter } from "./job-reporter.js";
import { type JobHandler, type JobHandlers, type JobOutcome, NextJobWaiting } from "./job-types.js";

const nextId = createUlidGenerator();

function command(kind: "init" | "prune" = "init"): CommandRun {
  return kind === "init"
    ? { job_id: nextId(), kind: "init", requires_admin_creds: false }
    : { job_id: nextId(), kind: "prune", requires_admin_creds: true };
}

function recordingReporter() {
  const events: string[] = [];
  const reporter: JobReporter = {
    started: (jobId) => events.push(`started ${jobId}`),
    progress: (jobId) => events.push(`progress ${jobId}`),
    line: (jobId, stream, text) => events.push(`line ${jobId} ${stream} ${text}`),
    finished: (jobId, outcome) =>
      events.push(`finished ${jobId} ${outcome.status}${outcome.error ? ` ${outcome.error}` : ""}`),
  };
  return { events, reporter };
}

/** A handler that runs until released or aborted; it keeps each run's signal, by job id. */
function controllableHandler() {
  const releases = new Map<string, (outcome: JobOutcome) => void>();
  const signals = new Map<string, AbortSignal>();
  const handler: JobHandler = (run) =>
    new Promise((resolve) => {
      releases.set(run.command.job_id, resolve);
      signals.set(run.command.job_id, run.signal);
      run.signal.addEventListener("abort", () => resolve({ status: "cancelled", exit_code: null }));
    });
  return { handler, releases, signals };
}

function handlers(init: JobHandler | undefined): JobHandlers {
  return {
    backup: undefined,
    forget: undefined,
    prune: undefined,
    check: undefined,
    unlock: undefined,
    init,
    restore: undefined,
    diff: undefined,
    drill: undefined,
    copy: undefined,
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("createJobQueue", () => {
  it("runs jobs one at a time in arrival order", async () => {
    const { events, reporter } = recordingReporter();
    const { handler, releases } = controllableHandler();
    const queue = createJobQueue({ handlers: handlers(handler), reporter, log: createMemoryLogger() });
    const [a, b] = [command(), command()];
    queue.submit(a);
    queue.submit(b);
    await tick();
    expect(events).toEqual([`started ${a.job_id}`]);
    expect(queue.activeJobIds()).toEqual([a.job_id, b.job_id]);
    releases.get(a.job_id)?.({ status: "succeeded", exit_code: 0 });
    await tick();
    expect(events).toEqual([`started ${a.job_id}`, `finished ${a.job_id} succeeded`, `started ${b.job_id}`]);
    releases.get(b.job_id)?.({ status: "failed", exit_code: 1, error: "x" });
    await queue.idle();
    expect(events.at(-1)).toBe(`finished ${b.job_id} failed x`);
    expect(queue.activeJobIds()).toEqual([]);
  });

  it("runs a job's after-finish work after its job.finished and before the next job, reporting it no longer", async () => {
    const { events, reporter } = recordingReporter();
    const { handler, releases, signals } = controllableHandler();
    const queue = createJobQueue({ handlers: handlers(handler), reporter, log: createMemoryLogger() });
    const a = command();
    queue.submit(a);
    await tick();
    let endAfter: () => void = () => undefined;
    const after = new Promise<void>((resolve) => {
      endAfter = resolve;
    });
    releases.get(a.job_id)?.({
      status: "succeeded",
      exit_code: 0,
      afterFinish: async () => {
        events.push(`after ${a.job_id}`);
        await after;
      },
    });
    await tick();
    expect(events).toEqual([`started ${a.job_id}`, `finished ${a.job_id} succeeded`, `after ${a.job_id}`]);
    // Finished as far as the server knows, and nothing waits: the work runs on.
    expect(queue.activeJobIds()).toEqual([]);
    expect(signals.get(a.job_id)?.aborted).toBe(false);
    // A cancel of a finished job does not touch its after-finish work.
    queue.cancel(a.job_id);
    expect(signals.get(a.job_id)?.aborted).toBe(false);
    // A job that arrives stops the work and waits until it has ended (restic's locks never meet).
    const b = command();
    queue.submit(b);
    expect(queue.activeJobIds()).toEqual([b.job_id]);
    const reason: unknown = signals.get(a.job_id)?.reason;
    expect(reason).toBeInstanceOf(NextJobWaiting);
    expect(String((reason as Error).message)).toContain(b.job_id);
    await tick();
    expect(events.at(-1)).toBe(`after ${a.job_id}`);
    endAfter();
    await tick();
    expect(events.at(-1)).toBe(`started ${b.job_id}`);
    releases.get(b.job_id)?.({
      status: "succeeded",
      exit_code: 0,
      afterFinish: () => Promise.reject(new Error("stats broke")),
    });
    await queue.idle();
    expect(events.at(-1)).toBe(`finished ${b.job_id} succeeded`);
  });

  it("stops a job's after-finish work at once when the next job is already queued", async () => {
    const { events, reporter } = recordingReporter();
    const { handler, releases, signals } = controllableHandler();
    const queue = createJobQueue({ handlers: handlers(handler), reporter, log: createMemoryLogger() });
    const [a, b] = [command(), command()];
    queue.submit(a);
    queue.submit(b);
    await tick();
    let sawAborted: boolean | undefined;
    releases.get(a.job_id)?.({
      status: "succeeded",
      exit_code: 0,
      afterFinish: async () => {
        sawAborted = signals.get(a.job_id)?.aborted;
      },
    });
    await tick();
    expect(sawAborted).toBe(true);
    expect(signals.get(a.job_id)?.reason).toBeInstanceOf(NextJobWaiting);
    expect(events).toEqual([`started ${a.job_id}`, `finished ${a.job_id} succeeded`, `started ${b.job_id}`]);
    queue.cancel(b.job_id);
    await queue.idle();
  });

  it("cancels a queued job without running it, and the running one through its signal", async () => {
    const { events, reporter } = recordingReporter();
    const { handler } = controllableHandler();
    const queue = createJobQueue({ handlers: handlers(handler), reporter, log: createMemoryLogger() });
    const [a, b] = [command(), command()];
    queue.submit(a);
    queue.submit(b);
    queue.cancel(b.job_id);
    expect(events).toContain(`finished ${b.job_id} cancelled`);
    queue.cancel(a.job_id);
    await queue.idle();
    expect(events.filter((event) => event.startsWith("started"))).toEqual([`started ${a.job_id}`]);
    expect(events.at(-1)).toBe(`finished ${a.job_id} cancelled`);
  });

  it("refuses kinds this agent does not implement at once, even behind a running job", async () => {
    const { events, reporter } = recordingReporter();
    const { handler } = controllableHandler();
    const queue = createJobQueue({ handlers: handlers(handler), reporter, log: createMemoryLogger() });
    const running = command();
    queue.submit(running);
    const prune = command("prune");
    queue.submit(prune);
    expect(events).toContain(`finished ${prune.job_id} failed prune is not supported by this agent version`);
    expect(queue.activeJobIds()).toEqual([running.job_id]);
  });

  it("ignores a duplicate job id and survives a throwing handler", async () => {
    const { events, reporter } = recordingReporter();
    const log = createMemoryLogger();
    const queue = createJobQueue({
      handlers: handlers(async () => {
        throw new Error("boom");
      }),
      reporter,
      log,
    });
    const a = command();
    queue.submit(a);
    queue.submit(a);
    await queue.idle();
    expect(events).toEqual([
      `started ${a.job_id}`,
      `finished ${a.job_id} failed the agent failed while running the job`,
    ]);
    expect(log.entries.map((entry) => entry.message)).toContain("ignored a duplicate command.run");
  });

  it("reports a cancel it cannot act on in the log only", () => {
    const { events, reporter } = recordingReporter();
    const log = createMemoryLogger();
    const queue = createJobQueue({ handlers: handlers(undefined), reporter, log });
    queue.cancel(nextId());
    expect(events).toEqual([]);
    expect(log.entries[0]?.level).toBe("warn");
  });
});

describe("createJobQueue timeouts", () => {
  it("stops a job past its kind's bound and fails it with the bound and restic's last error", async () => {
    const { events, reporter } = recordingReporter();
    const timers = createManualTimers();
    let aborted = false;
    const handler: JobHandler = (run) =>
      new Promise((resolve) => {
        run.log(
          "stderr",
          "Fatal: unable to open config file: dial tcp 127.0.0.1:1: connect: connection refused",
        );
        run.log(
          "stderr",
          "Load(<config/0000000000>, 0, 0) returned error, retrying after 1.5s: connection refused",
        );
        run.signal.addEventListener("abort", () => {
          aborted = true;
          // What restic prints while it is being stopped is not the reason.
          run.log("stderr", "signal terminated received, cleaning up");
          resolve({ status: "cancelled", exit_code: null });
        });
      });
    const queue = createJobQueue({
      handlers: handlers(handler),
      reporter,
      log: createMemoryLogger(),
      timeouts: { init: 10 * 60_000 },
      timers,
    });
    const job = command("init");
    queue.submit(job);
    await tick();
    timers.advance(10 * 60_000 - 1);
    await tick();
    expect(aborted).toBe(false);
    timers.advance(1);
    await queue.idle();
    expect(aborted).toBe(true);
    expect(events).toContain(
      `line ${job.job_id} agent stopping the job: it ran longer than its maximum of 10 min (FLEETBACK_JOB_TIMEOUT_INIT on this agent)`,
    );
    expect(events.at(-1)).toBe(
      `finished ${job.job_id} failed timed out after 10 min; last restic error: Fatal: unable to open config file: dial tcp 127.0.0.1:1: connect: connection refused`,
    );
  });

  it("leaves a job that ends in time alone, and a bound of null means none", async () => {
    const { events, reporter } = recordingReporter();
    const timers = createManualTimers();
    const { handler, releases } = controllableHandler();
    const queue = createJobQueue({
      handlers: handlers(handler),
      reporter,
      log: createMemoryLogger(),
      timeouts: { init: null },
      timers,
    });
    const job = command("init");
    queue.submit(job);
    await tick();
    timers.advance(365 * 24 * 3_600_000);
    releases.get(job.job_id)?.({ status: "succeeded", exit_code: 0 });
    await queue.idle();
    expect(events.at(-1)).toBe(`finished ${job.job_id} succeeded`);
  });
});
