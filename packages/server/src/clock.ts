/**
 * @module clock
 * Time is injected so tickers, deadlines and expiries are tested without waiting. The port itself
 * (Clock, Timers and their system adapters) is shared with the agent in @fleetback/protocol.
 */
import type { Clock } from "@fleetback/protocol";

export { type Clock, systemClock, systemTimers, type Timers } from "@fleetback/protocol";

/** A clock tests move by hand. */
export function createManualClock(start: Date = new Date("2026-01-01T00:00:00Z")): Clock & {
  advance(ms: number): void;
  set(date: Date): void;
} {
  let current = start.getTime();
  return {
    now: () => new Date(current),
    advance(ms: number) {
      current += ms;
    },
    set(date: Date) {
      current = date.getTime();
    },
  };
}

/** The UTC day of an instant, "YYYY-MM-DD": the key of every day-by-day history (sizes, evidence). */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}
