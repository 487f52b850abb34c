/**
 * @module auth/rate-limit
 * A fixed-window counter per key (source IP, username). In memory on purpose: a restart resets
 * it, which only ever helps a legitimate user, and the bucket map is swept as it is used.
 */
import type { Clock } from "../clock.js";

export interface RateLimiter {
  /** Counts one attempt for `key`; `allowed` is false once the window's limit is reached. */
  hit(key: string): { allowed: boolean; retryAfterSeconds: number };
  /** Forgets `key` (e.g. after a successful login). */
  reset(key: string): void;
}

export function createRateLimiter(options: { limit: number; windowMs: number; clock: Clock }): RateLimiter {
  const buckets = new Map<string, { start: number; count: number }>();
  let lastSweep = 0;

  function sweep(now: number): void {
    if (now - lastSweep < options.windowMs) {
      return;
    }
    lastSweep = now;
    for (const [key, bucket] of buckets) {
      if (now - bucket.start >= options.windowMs) {
        buckets.delete(key);
      }
    }
  }

  return {
    hit(key) {
      const now = options.clock.now().getTime();
      sweep(now);
      let bucket = buckets.get(key);
      if (!bucket || now - bucket.start >= options.windowMs) {
        bucket = { start: now, count: 0 };
        buckets.set(key, bucket);
      }
      bucket.count += 1;
      const retryAfterSeconds = Math.max(1, Math.ceil((bucket.start + options.windowMs - now) / 1000));
      return { allowed: bucket.count <= options.limit, retryAfterSeconds };
    },
    reset(key) {
      buckets.delete(key);
    },
  };
}
