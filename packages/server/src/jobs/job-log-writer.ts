/**
 * @module jobs/job-log-writer
 * Stores `log.stream` lines in batches: a busy restic prints thousands of lines, and one INSERT
 * per line would make the database the bottleneck of every backup. Lines wait in memory for at
 * most `flushIntervalMs` or until `batchLines` have gathered, then go in one multi-row INSERT.
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
 *
 * On PGlite a batch goes in by COPY: building and binding a 200-row INSERT (drizzle's query
 * builder, then PGlite's encoding of 1,000 parameters) cost more than PostgreSQL's own work on it
 * (issue 19, B3: 50 jobs streaming at once).
 */
import { type Database, jobLogs, jobs, type NewJobLog, type PgliteCopy, pgliteCopy } from "@fleetback/db";
import type { LogStream } from "@fleetback/protocol";
import { eq, max } from "drizzle-orm";
import { retryWhileDatabaseDown } from "../database-retry.js";
import type { Logger } from "../log.js";
import { realSetTimer, type SetTimer } from "../tickers/set-timer.js";
import type { JobEvents } from "./job-events.js";

export interface JobLogWriterOptions {
  db: Database;
  log: Logger;
  events: JobEvents;
  setTimer?: SetTimer;
  flushIntervalMs?: number;
  batchLines?: number;
  /** Clock for the warning's rate limit. */
  now?: () => number;
}

/** Rejected (host, job) pairs remembered, so repeated lines for one of them skip the query. */
export const REJECTED_LOG_JOBS_REMEMBERED = 256;
/** At most one "lines for another host's job" warning per host in this interval. */
export const REJECTED_LOG_WARN_INTERVAL_MS = 60_000;

const COPY_COLUMNS = ["job_id", "seq", "stream", "line", "ts"] as const;

function insertRows(db: Database, copy: PgliteCopy | undefined, rows: NewJobLog[]): Promise<unknown> {
  if (copy === undefined) {
    return db.insert(jobLogs).values(rows);
  }
  return copy(
    "job_logs",
    COPY_COLUMNS,
    rows.map((row) => [row.jobId, String(row.seq), row.stream, row.line, new Date(row.ts).toISOString()]),
  );
}

export interface JobLogWriter {
  /** Takes one line from `hostId`'s agent; never waits for the database. */
  append(hostId: string, message: LogStream): void;
  /** Stores everything received so far for the job (of this host), then forgets the job's state. */
  finish(hostId: string, jobId: string): Promise<void>;
  /** Stores every buffered line and stops the timers. */
  close(): Promise<void>;
  /** (host, job) pairs whose state is held now: buffered lines or an owner check under way. */
  heldJobs(): number;
}

interface JobLogState {
  hostId: string;
  jobId: string;
  /** Undefined until the job's owner and highest stored seq are known. */
  nextSeq: number | undefined;
  rejected: boolean;
  unsequenced: LogStream[];
  buffer: NewJobLog[];
  cancelTimer: (() => void) | undefined;
  /** Loads and writes of this job, strictly one after another. */
  chain: Promise<void>;
}

export function createJobLogWriter(options: JobLogWriterOptions): JobLogWriter {
  const { db, log, events } = options;
  const setTimer = options.setTimer ?? realSetTimer;
  const flushIntervalMs = options.flushIntervalMs ?? 250;
  const batchLines = options.batchLines ?? 200;
  const now = options.now ?? Date.now;
  const states = new Map<string, JobLogState>();
  /** Insertion order is recency: a hit is moved to the end, the oldest is evicted first. */
  const rejected = new Map<string, true>();
  const warnings = new Map<string, { lastAt: number; suppressed: number }>();
  const keyOf = (hostId: string, jobId: string) => `${hostId}\u0000${jobId}`;
  const copy = pgliteCopy(db);

  function remember(key: string): void {
    rejected.delete(key);
    rejected.set(key, true);
    if (rejected.size > REJECTED_LOG_JOBS_REMEMBERED) {
      const oldest = rejected.keys().next().value;
      if (oldest !== undefined) {
        rejected.delete(oldest);
      }
    }
  }

  function warnRejected(hostId: string, jobId: string): void {
    const at = now();
    const seen = warnings.get(hostId);
    if (seen && at - seen.lastAt < REJECTED_LOG_WARN_INTERVAL_MS) {
      seen.suppressed += 1;
      return;
    }
    log.warn(
      { host_id: hostId, job_id: jobId, suppressed: seen?.suppressed ?? 0 },
      "log lines for a job of another host or no job; dropped",
    );
    // One entry per enrolled host that misbehaved: bounded by the hosts table.
    warnings.set(hostId, { lastAt: at, suppressed: 0 });
  }

  function sequence(jobId: string, state: JobLogState, message: LogStream): void {
    const seq = state.nextSeq ?? 1;
    state.nextSeq = seq + 1;
    const ts = new Date(message.ts);
    state.buffer.push({ jobId, seq, stream: message.stream, line: message.line, ts });
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

  async function load(jobId: string, state: JobLogState): Promise<void> {
    const [job] = await retryWhileDatabaseDown(
      () => db.select({ hostId: jobs.hostId }).from(jobs).where(eq(jobs.id, jobId)),
      {
        onRetry: (err, attempt, delayMs) => {
          log.warn(
            { err, job_id: jobId, attempt, delay_ms: delayMs },
            "database unavailable; retrying a job's log",
          );
        },
      },
    );
    if (job?.hostId !== state.hostId) {
      state.rejected = true;
      state.unsequenced = [];
      const key = keyOf(state.hostId, jobId);
      remember(key);
      if (states.get(key) === state) {
        states.delete(key);
      }
      warnRejected(state.hostId, jobId);
      return;
    }
    const [row] = await retryWhileDatabaseDown(() =>
      db
        .select({ last: max(jobLogs.seq) })
        .from(jobLogs)
        .where(eq(jobLogs.jobId, jobId)),
    );
    state.nextSeq = (row?.last ?? 0) + 1;
    for (const message of state.unsequenced.splice(0)) {
      sequence(jobId, state, message);
    }
    schedule(jobId, state);
  }

  async function write(jobId: string, state: JobLogState): Promise<void> {
    // Lines that piled up while the job's seq was loading can exceed a batch: still bounded inserts.
    while (state.buffer.length > 0) {
      const rows = state.buffer.splice(0, batchLines);
      try {
        await retryWhileDatabaseDown(() => insertRows(db, copy, rows), {
          onRetry: (err, attempt, delayMs) => {
            log.warn(
              { err, job_id: jobId, lines: rows.length, attempt, delay_ms: delayMs },
              "database unavailable; retrying job log lines",
            );
          },
        });
      } catch (err) {
        log.error({ err, job_id: jobId, lines: rows.length }, "storing job log lines failed; they are lost");
      }
    }
  }

  function enqueue(state: JobLogState, step: () => Promise<void>): Promise<void> {
    state.chain = state.chain.then(step).catch((err: unknown) => {
      log.error({ err }, "job log writer step failed");
    });
    return state.chain;
  }

  function flush(jobId: string, state: JobLogState): Promise<void> {
    state.cancelTimer?.();
    state.cancelTimer = undefined;
    return enqueue(state, () => write(jobId, state));
  }

  function schedule(jobId: string, state: JobLogState): void {
    if (state.buffer.length >= batchLines) {
      void flush(jobId, state);
    } else if (state.buffer.length > 0 && state.cancelTimer === undefined) {
      state.cancelTimer = setTimer(() => {
        state.cancelTimer = undefined;
        void flush(jobId, state);
      }, flushIntervalMs);
    }
  }

  return {
    append(hostId, message) {
      const jobId = message.job_id;
      const key = keyOf(hostId, jobId);
      if (rejected.has(key)) {
        remember(key);
        return;
      }
      let state = states.get(key);
      if (!state) {
        state = {
          hostId,
          jobId,
          nextSeq: undefined,
          rejected: false,
          unsequenced: [],
          buffer: [],
          cancelTimer: undefined,
          chain: Promise.resolve(),
        };
        states.set(key, state);
        const created = state;
        void enqueue(created, () =>
          load(jobId, created).catch((err: unknown) => {
            // Forgotten, so the job's next line loads again instead of piling up unsequenced.
            log.error(
              { err, job_id: jobId, lines: created.unsequenced.length },
              "loading a job's log failed; its waiting lines are lost",
            );
            created.unsequenced = [];
            if (states.get(key) === created) {
              states.delete(key);
            }
          }),
        );
      }
      if (state.rejected) {
        return;
      }
      if (state.nextSeq === undefined) {
        state.unsequenced.push(message);
        return;
      }
      sequence(jobId, state, message);
      schedule(jobId, state);
    },
    async finish(hostId, jobId) {
      const key = keyOf(hostId, jobId);
      const state = states.get(key);
      if (!state) {
        return;
      }
      await flush(jobId, state);
      if (states.get(key) === state) {
        states.delete(key);
      }
    },
    heldJobs: () => states.size,
    async close() {
      await Promise.all([...states.values()].map((state) => flush(state.jobId, state)));
      states.clear();
      rejected.clear();
    },
  };
}
