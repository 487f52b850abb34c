/**
 * @module job-stream/job-stream
 * `GET /jobs/:id/stream`: the job page's live feed as Server-Sent Events (DESIGN.md "Pages"
 * allows WebSocket or SSE; SSE is a plain authenticated GET, so the session cookie, the role
 * check and the CSP `connect-src 'self'` apply unchanged).
 *
 * Every event is one `data:` line of JSON `{type, payload}`:
 *   state        { job, last_seq }   first, always: the stored job and its highest stored log seq
 *   job.status   { job_id, status, started_at? }
 *   job.progress the agent's job.progress payload (job_id, percent_done, files_done, ...)
 *   log.stream   { job_id, seq, stream, line, ts }
 *   job.finished { job_id, status, exit_code, error, summary, finished_at }   last; then the stream ends
 * A job already finished when the browser connects gets `state` and a synthetic `job.finished`
 * at once, and the stream ends (SPEC.md "States and transitions").
 */
import { type Database, type Job, jobLogs } from "@fleetback/db";
import { eq, max } from "drizzle-orm";
import { type JobEventMap, type JobEvents, jobEvents as processJobEvents } from "../jobs/job-events.js";
import { getJob, jobJson } from "../jobs/job-queries.js";
import type { Logger } from "../log.js";

/** A comment line now and then keeps proxies and the browser from timing the stream out. */
export const KEEPALIVE_MS = 25_000;
/** Told to EventSource: how long to wait before reconnecting after a dropped stream. */
export const RETRY_MS = 5_000;

export type StreamMessage =
  | { type: "state"; payload: { job: ReturnType<typeof jobJson>; last_seq: number } }
  | { type: "job.status"; payload: { job_id: string; status: string; started_at?: Date | undefined } }
  | { type: "job.progress"; payload: Record<string, unknown> }
  | { type: "log.stream"; payload: { job_id: string; seq: number; stream: string; line: string; ts: Date } }
  | {
      type: "job.finished";
      payload: {
        job_id: string;
        status: string;
        exit_code: number | null;
        error: string | null;
        summary: Record<string, unknown> | null;
        finished_at: Date | null;
      };
    };

const ACTIVE = new Set(["queued", "running"]);

/** Streams still open, so a shutting-down server can end them (they would hold server.close()). */
const openStreams = new Set<() => void>();

export function closeJobStreams(): void {
  for (const end of [...openStreams]) {
    end();
  }
}

export function openJobStreamCount(): number {
  return openStreams.size;
}

function finishedMessage(event: JobEventMap["job.finished"]): StreamMessage {
  return {
    type: "job.finished",
    payload: {
      job_id: event.jobId,
      status: event.status,
      exit_code: event.exitCode,
      error: event.error,
      summary: event.summary,
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
 * Opens the stream of job `jobId` (404 when it does not exist). Subscribes before reading the
 * stored state, so nothing that happens in between is missed; log lines already covered by
 * `last_seq` are not sent twice.
 */
export async function openJobStream(
  deps: { db: Database; log: Logger },
  jobId: string,
  options: { events?: JobEvents; keepaliveMs?: number } = {},
): Promise<Response> {
  const events = options.events ?? processJobEvents;
  const pending: StreamMessage[] = [];
  let deliver: ((message: StreamMessage) => void) | undefined;
  const push = (message: StreamMessage) => {
    if (deliver) {
      deliver(message);
    } else {
      pending.push(message);
    }
  };
  const unsubscribe = [
    events.on("job.updated", (event) => {
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
    events.on("job.log", (event) => {
      if (event.jobId === jobId) {
        push({
          type: "log.stream",
          payload: { job_id: jobId, seq: event.seq, stream: event.stream, line: event.line, ts: event.ts },
        });
      }
    }),
    events.on("job.finished", (event) => {
      if (event.jobId === jobId) {
        push(finishedMessage(event));
      }
    }),
  ];
  const stop = () => {
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

  const encoder = new TextEncoder();
  const keepaliveMs = options.keepaliveMs ?? KEEPALIVE_MS;
  let keepalive: ReturnType<typeof setInterval> | undefined;
  let end: (() => void) | undefined;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      let closed = false;
      end = () => {
        if (closed) {
          return;
        }
        closed = true;
        stop();
        clearInterval(keepalive);
        openStreams.delete(endStream);
        try {
          controller.close();
        } catch {
          // Already cancelled by the client.
        }
      };
      const endStream = () => end?.();
      openStreams.add(endStream);
      const write = (message: StreamMessage) => {
        if (closed) {
          return;
        }
        if (message.type === "log.stream") {
          if (message.payload.seq <= lastSeq) {
            return;
          }
          lastSeq = message.payload.seq;
        }
        try {
          controller.enqueue(encoder.encode(`data: ${JSON.stringify(message)}\n\n`));
        } catch {
          // The browser left between two events; cancel() is on its way.
          endStream();
          return;
        }
        if (message.type === "job.finished") {
          endStream();
        }
      };
      controller.enqueue(encoder.encode(`retry: ${RETRY_MS}\n\n`));
      write({ type: "state", payload: { job: jobJson(job), last_seq: lastSeq } });
      if (!ACTIVE.has(job.status)) {
        write(syntheticFinished(job));
        return;
      }
      for (const message of pending.splice(0)) {
        write(message);
      }
      deliver = write;
      keepalive = setInterval(() => {
        if (!closed) {
          try {
            controller.enqueue(encoder.encode(": keepalive\n\n"));
          } catch {
            endStream();
          }
        }
      }, keepaliveMs);
      keepalive.unref?.();
    },
    cancel() {
      // The browser went away (closed tab, navigation): stop listening.
      end?.();
    },
  });
  deps.log.debug({ job_id: jobId, status: job.status }, "job stream opened");
  return new Response(body, {
    headers: {
      "Content-Type": "text/event-stream; charset=utf-8",
      "Cache-Control": "no-store",
      "X-Accel-Buffering": "no",
    },
  });
}
