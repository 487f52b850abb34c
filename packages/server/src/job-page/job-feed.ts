/**
 * @module job-page/job-feed
 * What a job page's live stream says, independent of the transport: the stored state first, then
 * the job's events as they happen, ending with `job.finished`. Every message is JSON
 * `{type, payload}`:
 *   state        { job, last_seq }   first, always: the stored job and its highest stored log seq
 *   job.status   { job_id, status, started_at? }
 *   job.progress the agent's job.progress payload (job_id, percent_done, files_done, ...)
 *   log.stream   { job_id, seq, stream, line, ts, text, raw?, retry }   text: the line for people
 *                (log-render.ts), raw: restic's line when text says it differently
 *   job.finished { job_id, status, exit_code, error, summary, summary_rows, finished_at }   last;
 *                summary_rows: the summary labelled and formatted (summary-render.ts)
 * A job already finished when the feed opens gets `state` and a synthetic `job.finished` at once,
 * so every subscriber sees the same end.
 */
import { type Database, type Job, jobLogs } from "@fleetback/db";
import { eq, max } from "drizzle-orm";
import type { JobEventMap, JobEvents } from "../jobs/job-events.js";
import { getJob, jobJson } from "../jobs/job-queries.js";
import { type RenderedLogLine, renderLogLine } from "./log-render.js";
import { type SummaryRow, summaryRows } from "./summary-render.js";

export type StreamMessage =
  | { type: "state"; payload: { job: ReturnType<typeof jobJson>; last_seq: number } }
  | { type: "job.status"; payload: { job_id: string; status: string; started_at?: Date | undefined } }
  | { type: "job.progress"; payload: Record<string, unknown> }
  | {
      type: "log.stream";
      payload: { job_id: string; seq: number; stream: string; line: string; ts: Date } & RenderedLogLine;
    }
  | {
      type: "job.finished";
      payload: {
        job_id: string;
        status: string;
        exit_code: number | null;
        error: string | null;
        summary: Record<string, unknown> | null;
        summary_rows: SummaryRow[];
        finished_at: Date | null;
      };
    };

export interface JobFeed {
  jobId: string;
  /** Hands every message to `deliver`, the stored state first; the last one is job.finished. */
  follow(deliver: (message: StreamMessage) => void): void;
  /** Stops listening; idempotent. */
  stop(): void;
}

const ACTIVE = new Set(["queued", "running"]);

function finishedMessage(event: JobEventMap["job.finished"]): StreamMessage {
  return {
    type: "job.finished",
    payload: {
      job_id: event.jobId,
      status: event.status,
      exit_code: event.exitCode,
      error: event.error,
      summary: event.summary,
      summary_rows: summaryRows(event.summary),
      finished_at: event.finishedAt,
    },
  };
}

function syntheticFinished(job: Job): StreamMessage {
  return {
    type: "job.finished",
    payload: {
      job_id: job.id,
      status: job.status,
      exit_code: job.exitCode,
      error: job.error,
      summary: job.summary,
      summary_rows: summaryRows(job.summary),
      finished_at: job.finishedAt,
    },
  };
}

async function lastStoredSeq(db: Database, jobId: string): Promise<number> {
  const [row] = await db
    .select({ seq: max(jobLogs.seq) })
    .from(jobLogs)
    .where(eq(jobLogs.jobId, jobId));
  return row?.seq ?? 0;
}

/**
 * Opens the feed of job `jobId` (a not_found RequestError when it does not exist). Subscribes
 * before reading the stored state, so nothing that happens in between is missed; log lines
 * already covered by `last_seq` are not delivered twice, and nothing follows job.finished.
 */
export async function openJobFeed(
  deps: { db: Database; jobEvents: JobEvents },
  jobId: string,
): Promise<JobFeed> {
  const held: StreamMessage[] = [];
  let deliver: ((message: StreamMessage) => void) | undefined;
  const push = (message: StreamMessage) => {
    if (deliver) {
      deliver(message);
    } else {
      held.push(message);
    }
  };
  const unsubscribe = [
    deps.jobEvents.on("job.updated", (event) => {
      if (event.jobId !== jobId) {
        return;
      }
      if (event.status) {
        push({
          type: "job.status",
          payload: { job_id: jobId, status: event.status, started_at: event.startedAt },
        });
      }
      if (event.progress) {
        push({ type: "job.progress", payload: { ...event.progress } });
      }
    }),
    deps.jobEvents.on("job.log", (event) => {
      if (event.jobId === jobId) {
        push({
          type: "log.stream",
          payload: {
            job_id: jobId,
            seq: event.seq,
            stream: event.stream,
            line: event.line,
            ts: event.ts,
            ...renderLogLine(event.line),
          },
        });
      }
    }),
    deps.jobEvents.on("job.finished", (event) => {
      if (event.jobId === jobId) {
        push(finishedMessage(event));
      }
    }),
  ];
  let stopped = false;
  const stop = () => {
    if (stopped) {
      return;
    }
    stopped = true;
    for (const off of unsubscribe) {
      off();
    }
  };

  let job: Job;
  let lastSeq: number;
  try {
    job = await getJob(deps.db, jobId);
    lastSeq = await lastStoredSeq(deps.db, jobId);
  } catch (err) {
    stop();
    throw err;
  }

  return {
    jobId,
    stop,
    follow(sink) {
      const write = (message: StreamMessage) => {
        if (stopped) {
          return;
        }
        if (message.type === "log.stream") {
          if (message.payload.seq <= lastSeq) {
            return;
          }
          lastSeq = message.payload.seq;
        }
        sink(message);
        if (message.type === "job.finished") {
          stop();
        }
      };
      write({ type: "state", payload: { job: jobJson(job), last_seq: lastSeq } });
      if (!ACTIVE.has(job.status)) {
        write(syntheticFinished(job));
        return;
      }
      for (const message of held.splice(0)) {
        write(message);
      }
      deliver = write;
    },
  };
}
