/**
 * @module testing/manual-timers
 * Timers and a clock that move only when a test says so, while sockets and processes stay real.
 */
import type { Clock } from "../time/clock.js";
import type { Timers } from "../time/timers.js";

interface Scheduled {
  id: number;
  dueAt: number;
  intervalMs: number | undefined;
  callback: () => void;
}

export interface ManualTimers extends Timers {
  readonly clock: Clock;
  /** Moves time forward, running due callbacks in time order. */
  advance(ms: number): void;
  /** Delays of pending one-shot timers, earliest first. */
  pendingDelays(): number[];
  /** Every delay ever passed to `after`, in order. */
  readonly requestedDelays: number[];
}

export function createManualTimers(start = new Date("2026-01-01T00:00:00Z")): ManualTimers {
  let now = start.getTime();
  let nextId = 1;
  const scheduled = new Map<number, Scheduled>();
  const requestedDelays: number[] = [];
  const add = (ms: number, callback: () => void, intervalMs: number | undefined) => {
    const id = nextId++;
    scheduled.set(id, { id, dueAt: now + ms, intervalMs, callback });
    return () => {
      scheduled.delete(id);
    };
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
        const due = [...scheduled.values()]
          .filter((entry) => entry.dueAt <= target)
          .sort((a, b) => a.dueAt - b.dueAt || a.id - b.id)[0];
        if (due === undefined) {
          break;
        }
        now = due.dueAt;
        if (due.intervalMs === undefined) {
          scheduled.delete(due.id);
        } else {
          due.dueAt += due.intervalMs;
        }
        due.callback();
      }
      now = target;
    },
    pendingDelays() {
      return [...scheduled.values()]
        .filter((entry) => entry.intervalMs === undefined)
        .map((entry) => entry.dueAt - now)
        .sort((a, b) => a - b);
    },
  };
}
