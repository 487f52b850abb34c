/**
 * @module ids
 * The id and randomness collaborator of ServerDeps. Held per server rather than at module level so
 * no state (the monotonic job-id factory) is shared between servers in one process, and so a test
 * can swap in predictable ids.
 */
import { randomBytes } from "node:crypto";
import { monotonicFactory, ulid } from "ulidx";

export interface Ids {
  /** A ULID whose time part is `now` (the injected clock's time, not the system's). */
  ulid(now: Date): string;
  /**
   * A job id: a ULID (the wire's `job_id` is one) that sorts by creation time, and ids made within
   * one millisecond still sort in creation order.
   */
  jobId(now: Date): string;
  /** `size` cryptographically random bytes. */
  randomBytes(size: number): Buffer;
}

/**
 * A sequence of ULIDs that keep creation order within one millisecond. Each owner (the job ids of
 * one server, one notifier's delivery log) holds its own.
 */
export function createMonotonicUlids(): (now: Date) => string {
  const next = monotonicFactory();
  return (now) => next(now.getTime());
}

export function createIds(): Ids {
  const jobIds = createMonotonicUlids();
  return {
    ulid: (now) => ulid(now.getTime()),
    jobId: jobIds,
    randomBytes: (size) => randomBytes(size),
  };
}
