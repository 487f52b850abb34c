/**
 * @module manual-timers
 * The time port's test double, one for the server's and the agent's tests: timers and a clock
 * that move only when a test says so, while sockets, processes and databases stay real. Imported
 * as `@fleetback/protocol/manual-timers`, not from the package's index, so no production import
 * pulls it in.
 */
import type { CancelTimer, Clock, Timers } from "./time.js";

interface Scheduled {
  id: number;
  dueAt: number;
  /** Set for `every`: the timer is due again this long after it ran. */
  intervalMs: number | undefined;
  callback: () => void;
}

export interface ManualTimers extends Timers {
  /** Reads the timers' own time, so code that takes a Clock sees the moves too. */
  readonly clock: Clock;
  /** Moves time forward by `ms`, running what falls due in due order (a deadline to the millisecond). */
  advance(ms: number): void;
  /** Runs every pending timer once, in the order they were set, without moving time. */
  runAll(): void;
  /** Timers set and neither run (one-shots) nor cancelled, repeating ones included. */
  pending(): number;
  /** Delays still to go of the pending one-shot timers, earliest first. */
  pendingDelays(): number[];
  /** Every delay ever passed to `after`, in order. */
  readonly requestedDelays: number[];
}

/** A test's own manual clock, for timers that must move the same clock the code under test reads. */
export interface MovableClock extends Clock {
  advance(ms: number): void;
}

/**
 * Timers on their own time from `start`, or on `clock`, which `advance` then moves; a clock moved
 * from outside makes what is due by then run on the next `advance(0)`.
 */
export function createManualTimers(
  start: Date | MovableClock = new Date("2026-01-01T00:00:00Z"),
): ManualTimers {
  let own = start instanceof Date ? start.getTime() : 0;
  const clock: Clock = start instanceof Date ? { now: () => new Date(own) } : start;
  const current = () => clock.now().getTime();
  // Forward only: a timer found overdue runs at the clock's time, which stays where it is.
  const moveTo = (at: number) => {
    const by = at - current();
    if (by <= 0) {
      return;
    }
    if (start instanceof Date) {
      own += by;
    } else {
      start.advance(by);
    }
  };
  let nextId = 1;
  const scheduled = new Map<number, Scheduled>();
  const requestedDelays: number[] = [];
  const add = (ms: number, callback: () => void, intervalMs: number | undefined): CancelTimer => {
    const id = nextId++;
    scheduled.set(id, { id, dueAt: current() + ms, intervalMs, callback });
    return () => {
      scheduled.delete(id);
    };
  };
  // A repeating timer is re-armed before its callback runs, so a callback that cancels it stops it.
  const fire = (entry: Scheduled, from: number) => {
    if (entry.intervalMs === undefined) {
      scheduled.delete(entry.id);
    } else {
      entry.dueAt = from + entry.intervalMs;
    }
    entry.callback();
  };
  return {
    clock,
    requestedDelays,
    after(ms, callback) {
      requestedDelays.push(ms);
      return add(ms, callback, undefined);
    },
    every(ms, callback) {
      return add(ms, callback, ms);
    },
    advance(ms) {
      const target = current() + ms;
      for (;;) {
        let due: Scheduled | undefined;
        for (const entry of scheduled.values()) {
          if (entry.dueAt <= target && (due === undefined || entry.dueAt < due.dueAt)) {
            due = entry;
          }
        }
        if (due === undefined) {
          break;
        }
        moveTo(due.dueAt);
        fire(due, current());
      }
      moveTo(target);
    },
    runAll() {
      for (const entry of [...scheduled.values()]) {
        fire(entry, current());
      }
    },
    pending: () => scheduled.size,
    pendingDelays() {
      return [...scheduled.values()]
        .filter((entry) => entry.intervalMs === undefined)
        .map((entry) => entry.dueAt - current())
        .sort((a, b) => a - b);
    },
  };
}
