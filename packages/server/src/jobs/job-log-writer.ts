/**
 * @module jobs/job-log-writer
 * Stores `log.stream` lines in batches: a busy restic prints thousands of lines, and one INSERT
 * per line would make the database the bottleneck of every backup. Lines wait in memory for at
 * most `flushIntervalMs` or until `batchLines` have gathered, then go in one statement.
 *
 * A statement holds the lines of every job, not of one: with 50 jobs streaming at once, a
 * statement (and on PGlite a commit) per job per 200 lines cost more than the rows in them, and on
 * PostgreSQL drizzle's building of a multi-row INSERT (a parameter per column per row) cost more
 * than the database's work on it (issue 19, B3). The rows go in by insertTextRows: COPY on PGlite,
 * arrays unnested on PostgreSQL, with each row's foreign-key check skipped while the statement's
 * transaction holds its jobs (job-log-store.ts). Statements are written one after another. While they are, the
 * next lines gather, so under load statements grow instead of queueing: up to `batchLines` lines
 * of one job and `statementLines` in all, so that one flooding job cannot fill every statement
 * while the other jobs' lines wait. One job's row can still fail its statement (a NUL in a line,
 * the job deleted meanwhile): the statement is then written job by job, so only that job loses
 * its lines, as when batches were per job.
 *
 * What is kept of a job's lines is bounded first, whatever the agent sent (job-log-bounds.ts): long
 * lines are cut, and past a job's first lines only its last ones are kept, stored when it finishes.
 *
 * Each line gets its seq here, in arrival order, continuing after the highest seq already stored
 * for the job (a server restart or a dropped state starts from the database again). The first
 * line of a job also checks that the job belongs to the sending host: lines for another host's
 * job, or an unknown one, are dropped and never reach the live stream.
 *
 * State is keyed by host *and* job, so one host's frames naming another host's job id never touch
 * that job's state (they used to claim it and hide the owner's lines). A rejected pair is
 * forgotten after its check, remembered only in a small LRU so that a stream of lines for one
 * bogus job costs one query, and the warning is logged at most once per host per interval: a
 * hostile host can neither grow server memory nor flood the log.
 */

import type { Database } from "@fleetback/db";
import type { LogStream } from "@fleetback/protocol";
import { systemClock } from "@fleetback/protocol";
import type { Logger } from "../log.js";
import { realSetTimer, type SetTimer } from "../tickers/set-timer.js";
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
import { createJobLogRejections } from "./job-log-rejections.js";
import { statements } from "./job-log-statements.js";
import { createJobLogStore, type LogRow } from "./job-log-store.js";

export interface JobLogWriterOptions {
  db: Database;
  log: Logger;
  events: JobEvents;
  setTimer?: SetTimer;
  flushIntervalMs?: number;
  /** One job's lines that start a write at once, and the most one statement carries of one job. */
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
  /** Stores everything received so far for the job (of this host), then forgets the job's state. */
  finish(hostId: string, jobId: string): Promise<void>;
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
}

export function createJobLogWriter(options: JobLogWriterOptions): JobLogWriter {
  const { db, log, events } = options;
  const setTimer = options.setTimer ?? realSetTimer;
  const flushIntervalMs = options.flushIntervalMs ?? 250;
  const batchLines = options.batchLines ?? 200;
  const statementLines = Math.max(batchLines, options.statementLines ?? 2_000);
  const now = options.now ?? (() => systemClock.now().getTime());
  const kept = { head: options.headLines ?? HEAD_LOG_LINES, tail: options.tailLines ?? TAIL_LOG_LINES };
  const states = new Map<string, JobLogState>();
  const store = createJobLogStore(db, log);
  const rejected = createJobLogRejections(log, now);
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

  function sequence(jobId: string, state: JobLogState, message: LogStream): void {
    const seq = state.nextSeq ?? 1;
    state.nextSeq = seq + 1;
    // The protocol's pattern admits a few times JavaScript cannot read (second 60): such a line
    // would fail its whole batch, so it takes the time it arrived.
    const given = new Date(message.ts);
    const ts = Number.isNaN(given.getTime()) ? new Date(now()) : given;
    pending.push([jobId, String(seq), message.stream, message.line, ts.toISOString()]);
    queued += 1;
    const count = (waiting.get(jobId) ?? 0) + 1;
    waiting.set(jobId, count);
    if (count >= batchLines || pending.length >= statementLines) {
      kickSoon();
    }
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
    if ((await store.runnerOf(jobId)) !== state.hostId) {
      state.rejected = true;
      state.unsequenced = [];
      const key = keyOf(state.hostId, jobId);
      rejected.reject(key, state.hostId, jobId);
      if (states.get(key) === state) {
        states.delete(key);
      }
      return;
    }
    state.nextSeq = await store.nextSeq(jobId);
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
        // Lines may have come between the last backlog and here, a full batch among them.
        if (pending.length >= statementLines || [...waiting.values()].some((count) => count >= batchLines)) {
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
      cancelTimer = setTimer(() => {
        cancelTimer = undefined;
        kick();
      }, flushIntervalMs);
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
      if (!state) {
        const created: JobLogState = {
          hostId,
          jobId,
          nextSeq: undefined,
          rejected: false,
          unsequenced: [],
          tail: emptyTail(),
          loaded: Promise.resolve(),
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
        return;
      }
      await state.loaded;
      if (!state.rejected && state.nextSeq !== undefined) {
        releaseHeld(state);
      }
      await flush();
      if (states.get(key) === state) {
        states.delete(key);
      }
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
    },
  };
}
