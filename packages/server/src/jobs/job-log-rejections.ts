/**
 * @module jobs/job-log-rejections
 * (host, job) pairs whose lines the job log writer refused: another host's job, or no job. Kept in
 * a small LRU so that a stream of lines for one bogus job costs one query, and warned of at most
 * once per host per interval: a hostile host can neither grow server memory nor flood the log.
 */
import type { Logger } from "../log.js";

/** Rejected (host, job) pairs remembered, so repeated lines for one of them skip the query. */
export const REJECTED_LOG_JOBS_REMEMBERED = 256;
/** At most one "lines for another host's job" warning per host in this interval. */
export const REJECTED_LOG_WARN_INTERVAL_MS = 60_000;

export interface JobLogRejections {
  /** Whether the pair was refused lately (and keeps it remembered). */
  has(key: string): boolean;
  /** Remembers a refused pair and warns, at most once per host per interval. */
  reject(key: string, hostId: string, jobId: string): void;
  clear(): void;
}

export function createJobLogRejections(log: Logger, now: () => number): JobLogRejections {
  /** Insertion order is recency: a hit is moved to the end, the oldest is evicted first. */
  const rejected = new Map<string, true>();
  // One entry per enrolled host that misbehaved: bounded by the hosts table.
  const warnings = new Map<string, { lastAt: number; suppressed: number }>();

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

  return {
    has(key) {
      if (!rejected.has(key)) {
        return false;
      }
      remember(key);
      return true;
    },
    reject(key, hostId, jobId) {
      remember(key);
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
      warnings.set(hostId, { lastAt: at, suppressed: 0 });
    },
    clear() {
      rejected.clear();
    },
  };
}
