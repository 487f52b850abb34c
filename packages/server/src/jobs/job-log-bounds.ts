/**
 * @module jobs/job-log-bounds
 * What the server keeps of a job's log, whatever the agent sends: the agent already cuts lines to
 * 8 KiB, but a modified or hostile agent could send 900 KB lines by the hundred (issue 34: 159 MB
 * of `job_logs` from one host, and as much again through the cluster bus).
 *
 * A line longer than MAX_LOG_LINE_CHARS is cut, with a marker saying how much went. Of a job's
 * lines the first HEAD_LOG_LINES are stored as they come; after that only the last TAIL_LOG_LINES
 * are held in memory, and when the job finishes one "[… N lines dropped …]" line and that tail are
 * stored. Head and tail rather than the head alone: restic ends with the lines that say why it
 * failed, and a log cut after its start would hide exactly those. The tail waits for the end of the
 * job (it is not streamed live), so memory per job stays bounded by TAIL_LOG_LINES lines.
 */
import type { LogStream } from "@fleetback/protocol";

/** Above the agent's 8 KiB cut plus its own marker, so a well-behaved agent's lines arrive whole. */
export const MAX_LOG_LINE_CHARS = 10_000;
export const HEAD_LOG_LINES = 2_000;
export const TAIL_LOG_LINES = 500;

export function clipLogLine(message: LogStream): LogStream {
  const { line } = message;
  if (line.length <= MAX_LOG_LINE_CHARS) {
    return message;
  }
  return {
    ...message,
    line: `${line.slice(0, MAX_LOG_LINE_CHARS)} [… ${line.length - MAX_LOG_LINE_CHARS} more characters cut by the server]`,
  };
}

/** The last lines of a job past its head, and how many fell out of them. */
export interface LogTail {
  lines: LogStream[];
  dropped: number;
}

export function emptyTail(): LogTail {
  return { lines: [], dropped: 0 };
}

export function holdInTail(tail: LogTail, message: LogStream, keep: number): void {
  tail.lines.push(message);
  if (tail.lines.length > keep) {
    tail.lines.shift();
    tail.dropped += 1;
  }
}

/** Empties the tail: the marker line (when lines were dropped), then the held lines. */
export function releaseTail(tail: LogTail, jobId: string, kept: { head: number; tail: number }): LogStream[] {
  const lines = tail.lines;
  const dropped = tail.dropped;
  tail.lines = [];
  tail.dropped = 0;
  const first = lines[0];
  if (dropped === 0 || first === undefined) {
    return lines;
  }
  const marker: LogStream = {
    job_id: jobId,
    stream: "stderr",
    line: `[… ${dropped} lines dropped by the server: a job keeps its first ${kept.head} and last ${kept.tail} lines …]`,
    ts: first.ts,
  };
  return [marker, ...lines];
}
