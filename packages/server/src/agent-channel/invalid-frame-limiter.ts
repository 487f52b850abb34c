/**
 * @module agent-channel/invalid-frame-limiter
 * Counts a connection's invalid frames in a sliding window (INVALID_FRAME_LIMIT: twenty within one
 * minute close the connection with 4008). Time comes from the injected clock.
 */
import { INVALID_FRAME_LIMIT } from "@fleetback/protocol";
import type { Clock } from "../clock.js";

export interface InvalidFrameLimiter {
  /** Records one invalid frame; true when the limit is reached and the connection must close. */
  record(): boolean;
}

export function createInvalidFrameLimiter(
  clock: Clock,
  limit: { count: number; windowMs: number } = INVALID_FRAME_LIMIT,
): InvalidFrameLimiter {
  const seen: number[] = [];
  return {
    record() {
      const now = clock.now().getTime();
      seen.push(now);
      while (seen.length > 0 && (seen[0] ?? now) <= now - limit.windowMs) {
        seen.shift();
      }
      return seen.length >= limit.count;
    },
  };
}
