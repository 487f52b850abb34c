/**
 * @module connection/outbox
 * Job reports produced while the socket is down wait here and go out right after the next hello.
 * Jobs keep running across a reconnect, and losing their `job.finished` would leave the server
 * with a job it can only call lost. Bounded: when full, old log lines go first; start and finish
 * reports are kept as long as there is any log line to drop instead.
 */

export const DEFAULT_OUTBOX_LIMIT = 5_000;

interface Entry {
  frame: string;
  type: string;
  jobId: string | undefined;
}

export interface Outbox {
  push(frame: string, type: string, jobId?: string): void;
  /** Sends in order while `send` accepts; stops at the first refusal and keeps the rest. */
  drain(send: (frame: string) => boolean): void;
  /** Jobs whose `job.finished` is still waiting here: still running as far as the server knows. */
  unreportedJobIds(): string[];
  readonly size: number;
}

export function createOutbox(limit = DEFAULT_OUTBOX_LIMIT): Outbox {
  let entries: Entry[] = [];
  return {
    push(frame, type, jobId) {
      entries.push({ frame, type, jobId });
      if (entries.length > limit) {
        const logLine = entries.findIndex((entry) => entry.type === "log.stream");
        entries.splice(logLine === -1 ? 0 : logLine, 1);
      }
    },
    drain(send) {
      let sent = 0;
      for (const entry of entries) {
        if (!send(entry.frame)) {
          break;
        }
        sent += 1;
      }
      entries = entries.slice(sent);
    },
    unreportedJobIds() {
      return entries.flatMap((entry) =>
        entry.type === "job.finished" && entry.jobId !== undefined ? [entry.jobId] : [],
      );
    },
    get size() {
      return entries.length;
    },
  };
}
