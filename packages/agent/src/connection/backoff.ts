/**
 * @module connection/backoff
 * Reconnect delays: exponential from 1 s, doubling to a 60 s cap, with full jitter (a uniformly
 * random delay below the ceiling), so that a fleet of agents that lost the server at the same
 * moment does not come back in one synchronised wave.
 */
import { RECONNECT_BACKOFF } from "@fleetback/protocol";

export interface Backoff {
  /** The delay before the next attempt; each call raises the ceiling until the cap. */
  next(): number;
  /** After a connection stayed up long enough: the next delay starts from the bottom again. */
  reset(): void;
}

export interface BackoffOptions {
  initialMs?: number;
  maxMs?: number;
  /** In [0, 1), like Math.random. */
  random?: () => number;
}

export function createBackoff(options: BackoffOptions = {}): Backoff {
  const initialMs = options.initialMs ?? RECONNECT_BACKOFF.initialMs;
  const maxMs = options.maxMs ?? RECONNECT_BACKOFF.maxMs;
  const random = options.random ?? Math.random;
  let ceiling = initialMs;
  return {
    next() {
      const delay = Math.floor(random() * ceiling);
      ceiling = Math.min(maxMs, ceiling * 2);
      return Math.min(delay, maxMs);
    },
    reset() {
      ceiling = initialMs;
    },
  };
}
