/**
 * @module ids
 * The id and randomness collaborator of ServerDeps. Held per server rather than at module level so
 * no state (the monotonic job-id factory) is shared between servers in one process, and so a test
 * can swap in predictable ids.
 */
import { randomBytes, randomFillSync } from "node:crypto";
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

const POOL_BYTES = 4096;

/**
 * ulidx's own generator asks the operating system for one byte per character (16 calls per id);
 * a policy change over 10,000 hosts spent more time there than planning them. This one draws the
 * same cryptographic bytes a pool at a time. ulidx maps `prng()` to one of 32 characters with
 * `floor(prng() * 32)`, so `byte / 256` keeps every character equally likely.
 */
export function pooledRandom(): () => number {
  const pool = Buffer.alloc(POOL_BYTES);
  let next = POOL_BYTES;
  return () => {
    if (next === POOL_BYTES) {
      randomFillSync(pool);
      next = 0;
    }
    return (pool[next++] as number) / 256;
  };
}

/**
 * A sequence of ULIDs that keep creation order within one millisecond. Each owner (the job ids of
 * one server, one notifier's delivery log) holds its own.
 */
export function createMonotonicUlids(): (now: Date) => string {
  const next = monotonicFactory(pooledRandom());
  return (now) => next(now.getTime());
}

export function createIds(): Ids {
  const jobIds = createMonotonicUlids();
  const random = pooledRandom();
  return {
    ulid: (now) => ulid(now.getTime(), random),
    jobId: jobIds,
    randomBytes: (size) => randomBytes(size),
  };
}
