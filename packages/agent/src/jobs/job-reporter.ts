/**
 * @module jobs/job-reporter
 * Turns job events into wire messages. Log lines are capped so that one enormous line of tool
 * output cannot produce a frame the server drops (1 MiB): the log is for people, and parsers read
 * the full line before it gets here.
 */

import type { AgentMessageType, JobKind, LogStreamName, PayloadOf } from "@fleetback/protocol";
import { stripTerminalCodes } from "@fleetback/protocol";
import type { Clock } from "../time/clock.js";
import type { JobOutcome, ProgressState } from "./job-types.js";

export const MAX_LOG_LINE_LENGTH = 8 * 1024;

export type Emit = <K extends AgentMessageType>(type: K, payload: PayloadOf<K>) => void;

export interface JobReporter {
  started(jobId: string, kind: JobKind): void;
  line(jobId: string, stream: LogStreamName, text: string): void;
  progress(jobId: string, progress: ProgressState): void;
  finished(jobId: string, outcome: JobOutcome): void;
}

/** Error texts are short by contract ("short text"); the full story is in the log lines. */
const MAX_ERROR_LENGTH = 1_000;

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)} [… ${text.length - max} more characters]` : text;
}

export function createJobReporter(emit: Emit, clock: Clock): JobReporter {
  return {
    started(jobId, kind) {
      emit("job.started", { job_id: jobId, kind, started_at: clock.now().toISOString() });
    },
    line(jobId, stream, text) {
      emit("log.stream", {
        job_id: jobId,
        stream,
        // Hook output reaches here without passing restic.ts, which strips restic's own.
        line: clip(stripTerminalCodes(text), MAX_LOG_LINE_LENGTH),
        ts: clock.now().toISOString(),
      });
    },
    progress(jobId, progress) {
      emit("job.progress", { job_id: jobId, ...progress });
    },
    finished(jobId, outcome) {
      emit("job.finished", {
        job_id: jobId,
        status: outcome.status,
        exit_code: outcome.exit_code,
        ...(outcome.error === undefined ? {} : { error: clip(outcome.error, MAX_ERROR_LENGTH) }),
        ...(outcome.summary === undefined ? {} : { summary: outcome.summary }),
        ...(outcome.repository_unreachable === true ? { repository_unreachable: true } : {}),
      });
    },
  };
}
