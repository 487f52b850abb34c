/**
 * @module time/clock
 * Wall-clock time is injected so that timestamps on the wire (`ts`, `started_at`, claim
 * signatures) are deterministic in tests.
 */

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
