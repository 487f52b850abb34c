/**
 * @module jobs/job-log-writer
 * Stores `log.stream` lines in batches: a busy restic prints thousands of lines, and one INSERT
 * per line would make the database the bottleneck of every backup. Lines wait in memory for at
 * most `flushIntervalMs` or until `batchLines` have gathered, then go in one statement.
 *
 * A statement holds the lines of every job (issue 19, B3: with 50 jobs streaming, a statement per
 * job cost more than its rows), written by insertTextRows (COPY on PGlite, unnested arrays on
 * PostgreSQL) with the foreign-key check skipped while it holds its jobs (job-log-store.ts).
 * Statements go one after another; meanwhile the next lines gather, so under load statements grow
 * instead of queueing: up to `statementLines`, in turns of `batchLines` of each job, so one flooding
 * job cannot starve the others. A statement a row fails (a NUL, the job deleted meanwhile) is written
 * again in chunks of `batchLines` of one job: only that row's chunk is lost (job-log-store.ts).
 *
 * What is kept of a job's lines is bounded first, whatever the agent sent (job-log-bounds.ts): long
 * lines are cut, and past a job's first lines only its last ones are kept, stored when it finishes.
 *
 * Each line gets its seq here, in arrival order, after the highest stored for the job (a restart
 * starts from the database again). A job's first line checks that the job is the sending host's:
 * lines for another host's job, or an unknown one, are dropped and never reach the live stream.
 *
 * Lines that come after `finish` began are the job's epilogue (job-log-epilogues.ts): stored after
 * its log but never streamed, and `finish` returns where its own log ends (`jobs.log_end_seq`), so
 * a page followed live and the same page reloaded show the same log, the epilogue apart.
 *
 * State is keyed by host *and* job: one host's frames naming another's job never touch its state.
 * A rejected pair is remembered only in a small LRU (a stream of lines for one bogus job costs one
 * query) and warned of at most once per host per interval: a hostile host can neither grow server
 * memory nor flood the log.
 */

import type { Database } from "@fleetback/db";
import { type LogStream, systemClock, systemTimers, type Timers } from "@fleetback/protocol";
import type { Logger } from "../log.js";
import type { JobEvents } from "./job-events.js";
import {
  clipLogLine,
  emptyTail,
  HEAD_LOG_LINES,
  holdInTail,
  type LogTail,
  releaseTail,
  TAIL_LOG_LINES,
} from "./job-log-bounds.js";
import { createEpilogues, EPILOGUE_LINES, type Epilogue, takeEpilogueSeq } from "./job-log-epilogues.js";
import { createJobLogRejections } from "./job-log-rejections.js";
import { statements } from "./job-log-statements.js";
import { createJobLogStore, type LogRow } from "./job-log-store.js";
import { createLineTimes } from "./job-log-times.js";

export interface JobLogWriterOptions {
  db: Database;
  log: Logger;
  events: JobEvents;
  timers?: Timers;
  flushIntervalMs?: number;
  /** One job's lines that start a write at once, and a job's turn in a statement (job-log-statements.ts). */
  batchLines?: number;
  /** Lines of all jobs that start a write at once, and the most one statement carries. */
  statementLines?: number;
  /** Clock for the warning's rate limit, and the time of a line whose own ts is no real time. */
  now?: () => number;
  /** Lines of a job stored as they come, and the last lines stored when it ends (job-log-bounds.ts). */
  headLines?: number;
  tailLines?: number;
}

export interface JobLogWriter {
  /** Takes one line from `hostId`'s agent; never waits for the database. */
  append(hostId: string, message: LogStream): void;
  /** Stores the job's lines so far, forgets it; its last seq (0: none), undefined if not the host's. */
  finish(hostId: string, jobId: string): Promise<number | undefined>;
  /** Stores every buffered line and stops the timer. */
  close(): Promise<void>;
  /** (host, job) pairs whose state is held now: a job streaming, or an owner check under way. */
  heldJobs(): number;
}

interface JobLogState {
  hostId: string;
  jobId: string;
  /** Undefined until the job's owner and highest stored seq are known. */
  nextSeq: number | undefined;
  rejected: boolean;
  unsequenced: LogStream[];
  /** The lines past the head, waiting for the end of the job. */
  tail: LogTail;
  /** Settles when the owner check and the seq load are done (whatever their outcome). */
  loaded: Promise<void>;
  /** finish has begun: lines (the epilogue) wait in `after`. */
  ending: boolean;
  after: LogStream[];
}

export function createJobLogWriter(options: JobLogWriterOptions): JobLogWriter {
  const { db, log, events } = options;
  const timers = options.timers ?? systemTimers;
  const flushIntervalMs = options.flushIntervalMs ?? 250;
  const batchLines = options.batchLines ?? 200;
  const statementLines = Math.max(batchLines, options.statementLines ?? 2_000);
  const now = options.now ?? (() => systemClock.now().getTime());
  const kept = { head: options.headLines ?? HEAD_LOG_LINES, tail: options.tailLines ?? TAIL_LOG_LINES };
  const states = new Map<string, JobLogState>();
  const store = createJobLogStore(db, log, batchLines);
  const rejected = createJobLogRejections(log, now);
  const timeOf = createLineTimes(now);
  const keyOf = (hostId: string, jobId: string) => `${hostId}\u0000${jobId}`;

  /** Sequenced lines of every job not yet taken by a write, in arrival order. */
  let pending: LogRow[] = [];
  /** Lines in `pending` per job, for its own trigger. */
  const waiting = new Map<string, number>();
  /** Lines ever sequenced, and lines whose write has ended (stored or given up): tickets. */
  let queued = 0;
  let settled = 0;
  /** finish and close, each waiting for the lines queued before it to settle. */
  const waiters: Array<{ upTo: number; resolve: () => void }> = [];
  let cancelTimer: (() => void) | undefined;
  let draining: Promise<void> | undefined;
  let kickQueued = false;

  const epilogues = createEpilogues();

  function sequence(jobId: string, state: JobLogState, message: LogStream): void {
    const seq = state.nextSeq ?? 1;
    state.nextSeq = seq + 1;
    const ts = enqueue(jobId, seq, message);
    const errors = events.emit("job.log", {
      jobId,
      hostId: state.hostId,
      seq,
      stream: message.stream,
      line: message.line,
      ts,
    });
    for (const err of errors) {
      log.error({ err, job_id: jobId }, "a job.log listener failed");
    }
  }

  /** Stored, not streamed: the live page ended with the job's result. */
  function appendEpilogue(epilogue: Epilogue, jobId: string, message: LogStream): void {
    const seq = takeEpilogueSeq(epilogue);
    if (seq !== undefined) {
      enqueue(jobId, seq, message);
      schedule();
    }
  }

  /** Queues one line for the next statement; returns the time it is stored with. */
  function enqueue(jobId: string, seq: number, message: LogStream): Date {
    const { ts, text } = timeOf(message.ts);
    pending.push([jobId, String(seq), message.stream, message.line, text]);
    queued += 1;
    const count = (waiting.get(jobId) ?? 0) + 1;
    waiting.set(jobId, count);
    if (count >= batchLines || pending.length >= statementLines) {
      kickSoon();
    }
    return ts;
  }

  /** A line of the head is stored now; one past it waits in the tail (seq counts stored lines). */
  function admit(jobId: string, state: JobLogState, message: LogStream): void {
    if ((state.nextSeq ?? 1) > kept.head) {
      holdInTail(state.tail, message, kept.tail);
      return;
    }
    sequence(jobId, state, message);
  }

  function releaseHeld(state: JobLogState): void {
    for (const message of releaseTail(state.tail, state.jobId, kept)) {
      sequence(state.jobId, state, message);
    }
  }

  async function load(jobId: string, state: JobLogState): Promise<void> {
    const { runner, nextSeq } = await store.runnerAndNextSeq(jobId);
    if (runner !== state.hostId) {
      state.rejected = true;
      state.unsequenced = [];
      const key = keyOf(state.hostId, jobId);
      rejected.reject(key, state.hostId, jobId);
      if (states.get(key) === state) {
        states.delete(key);
      }
      return;
    }
    state.nextSeq = nextSeq;
    for (const message of state.unsequenced.splice(0)) {
      admit(jobId, state, message);
    }
    schedule();
  }

  function wake(): void {
    for (let i = waiters.length - 1; i >= 0; i--) {
      const waiter = waiters[i];
      if (waiter && waiter.upTo <= settled) {
        waiters.splice(i, 1);
        waiter.resolve();
      }
    }
  }

  async function drain(): Promise<void> {
    // Lines that gathered while the last statements were written go next, however few: under
    // load the statements grow by themselves, and a line waits at most one backlog beyond its own.
    while (pending.length > 0) {
      const backlog = pending;
      pending = [];
      waiting.clear();
      try {
        for (const rows of statements(backlog, batchLines, statementLines)) {
          await store.store(rows);
        }
      } finally {
        // Jobs' lines settle out of arrival order within a backlog, so waiters hear of it whole.
        settled += backlog.length;
        wake();
      }
    }
  }

  /** Starts writing now, unless a write is under way: that one takes the lines after its batch. */
  function kick(): void {
    cancelTimer?.();
    cancelTimer = undefined;
    if (draining) {
      return;
    }
    draining = drain()
      .catch((err: unknown) => {
        log.error({ err }, "job log writer step failed");
      })
      .finally(() => {
        draining = undefined;
        // Lines may have come between the last backlog and here: a full batch, or ones a flush
        // that found this write under way waits for (it would otherwise wait for the timer).
        const flushing = waiters.length > 0 && pending.length > 0;
        if (
          flushing ||
          pending.length >= statementLines ||
          [...waiting.values()].some((n) => n >= batchLines)
        ) {
          kickSoon();
        } else {
          schedule();
        }
      });
  }

  /**
   * Starts the write once the frames already received from every agent are read: on PGlite the
   * write holds the event loop, and a job's full batch read from one socket would otherwise go
   * nearly alone while the other agents' lines wait in theirs (issue 19, B3).
   */
  function kickSoon(): void {
    if (kickQueued) {
      return;
    }
    kickQueued = true;
    setImmediate(() => {
      kickQueued = false;
      kick();
    });
  }

  /** Arms the flush timer for lines that no full batch took (a full one starts its write at once). */
  function schedule(): void {
    if (pending.length > 0 && cancelTimer === undefined && draining === undefined) {
      cancelTimer = timers.after(flushIntervalMs, () => {
        cancelTimer = undefined;
        kick();
      });
    }
  }

  /** Writes what is pending now and resolves once every line queued so far has settled. */
  function flush(): Promise<void> {
    const upTo = queued;
    if (settled >= upTo) {
      return Promise.resolve();
    }
    const done = new Promise<void>((resolve) => {
      waiters.push({ upTo, resolve });
    });
    kick();
    return done;
  }

  return {
    append(hostId, received) {
      const message = clipLogLine(received);
      const jobId = message.job_id;
      const key = keyOf(hostId, jobId);
      if (rejected.has(key)) {
        return;
      }
      let state = states.get(key);
      if (state?.ending) {
        if (state.after.length < EPILOGUE_LINES) {
          state.after.push(message);
        }
        return;
      }
      const epilogue = state === undefined ? epilogues.get(key) : undefined;
      if (epilogue !== undefined) {
        appendEpilogue(epilogue, jobId, message);
        return;
      }
      if (!state) {
        const created: JobLogState = {
          hostId,
          jobId,
          nextSeq: undefined,
          rejected: false,
          unsequenced: [],
          tail: emptyTail(),
          loaded: Promise.resolve(),
          ending: false,
          after: [],
        };
        state = created;
        states.set(key, created);
        created.loaded = load(jobId, created).catch((err: unknown) => {
          // Forgotten, so the job's next line loads again instead of piling up unsequenced.
          log.error(
            { err, job_id: jobId, lines: created.unsequenced.length },
            "loading a job's log failed; its waiting lines are lost",
          );
          created.unsequenced = [];
          if (states.get(key) === created) {
            states.delete(key);
          }
        });
      }
      if (state.rejected) {
        return;
      }
      if (state.nextSeq === undefined) {
        state.unsequenced.push(message);
        return;
      }
      admit(jobId, state, message);
      schedule();
    },
    async finish(hostId, jobId) {
      const key = keyOf(hostId, jobId);
      const state = states.get(key);
      if (!state) {
        // No line of it came to this server (none logged, or this server started since).
        await flush();
        const found = rejected.has(key) ? undefined : await store.runnerAndNextSeq(jobId);
        if (found?.runner !== hostId) {
          return undefined;
        }
        const endSeq = found.nextSeq - 1;
        epilogues.remember(key, endSeq);
        return endSeq;
      }
      state.ending = true;
      await state.loaded;
      const owned = !state.rejected && state.nextSeq !== undefined;
      if (owned) {
        releaseHeld(state);
      }
      const endSeq = owned ? (state.nextSeq ?? 1) - 1 : undefined;
      await flush();
      if (states.get(key) === state) {
        states.delete(key);
      }
      if (endSeq === undefined) {
        return undefined;
      }
      const epilogue = epilogues.remember(key, endSeq);
      for (const message of state.after.splice(0)) {
        appendEpilogue(epilogue, jobId, message);
      }
      return endSeq;
    },
    heldJobs: () => states.size,
    async close() {
      await Promise.all([...states.values()].map((state) => state.loaded));
      for (const state of states.values()) {
        if (!state.rejected && state.nextSeq !== undefined) {
          releaseHeld(state);
        }
      }
      await flush();
      cancelTimer?.();
      cancelTimer = undefined;
      states.clear();
      rejected.clear();
      epilogues.clear();
    },
  };
}
