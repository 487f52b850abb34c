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

export function createManualTimers(start = new Date("2026-01-01T00:00:00Z")): ManualTimers {
  let now = start.getTime();
  let nextId = 1;
  const scheduled = new Map<number, Scheduled>();
  const requestedDelays: number[] = [];
  const add = (ms: number, callback: () => void, intervalMs: number | undefined): CancelTimer => {
    const id = nextId++;
    scheduled.set(id, { id, dueAt: now + ms, intervalMs, callback });
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
    clock: { now: () => new Date(now) },
    requestedDelays,
    after(ms, callback) {
      requestedDelays.push(ms);
      return add(ms, callback, undefined);
    },
    every(ms, callback) {
      return add(ms, callback, ms);
    },
    advance(ms) {
      const target = now + ms;
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
        now = due.dueAt;
        fire(due, now);
      }
      now = target;
    },
    runAll() {
      for (const entry of [...scheduled.values()]) {
        fire(entry, now);
      }
    },
    pending: () => scheduled.size,
    pendingDelays() {
      return [...scheduled.values()]
        .filter((entry) => entry.intervalMs === undefined)
        .map((entry) => entry.dueAt - now)
        .sort((a, b) => a - b);
    },
  };
}
