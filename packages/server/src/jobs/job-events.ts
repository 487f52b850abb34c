/**
 * @module jobs/job-events
 * The job-events port (types only): notifications about jobs, for the job page's live stream: status and progress
 * changes, each stored log line (with its seq) and the final state. Only facts already checked
 * against the job's owner are emitted, so one agent can never feed another host's job page.
 * One instance lives in ServerDeps, so a second implementation (PostgreSQL LISTEN/NOTIFY for
 * scale-out) can replace the in-process one without touching emitters or listeners.
 */
import type { JobProgress, JobSummary, LogStreamName } from "@fleetback/protocol";

export interface JobEventMap {
  "job.updated": {
    jobId: string;
    hostId: string;
    /** Present when the status changed; progress reports leave it out. */
    status?: "queued" | "running";
    startedAt?: Date;
    progress?: JobProgress;
  };
  "job.log": { jobId: string; hostId: string; seq: number; stream: LogStreamName; line: string; ts: Date };
  "job.finished": {
    jobId: string;
    hostId: string;
    status: "succeeded" | "failed" | "cancelled" | "lost";
    exitCode: number | null;
    error: string | null;
    summary: JobSummary | null;
    finishedAt: Date;
  };
}

export type JobEventName = keyof JobEventMap;
export type JobEventListener<K extends JobEventName> = (event: JobEventMap[K]) => void;

export interface JobEvents {
  /** Subscribes; returns the unsubscribe function. */
  on<K extends JobEventName>(name: K, listener: JobEventListener<K>): () => void;
  /**
   * Calls every listener of `name`. A throwing listener neither stops the others nor reaches the
   * emitter's caller (the agent socket loop): its error is returned for the caller to log.
   */
  emit<K extends JobEventName>(name: K, event: JobEventMap[K]): unknown[];
  listenerCount(name: JobEventName): number;
}
