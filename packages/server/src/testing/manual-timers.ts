/**
 * @module testing/manual-timers
 * A SetTimer whose timers run only when the test says so: deadlines without waiting for them.
 * `advance` moves this timer's own time and runs what falls due, so a test can check a deadline
 * to the millisecond (not yet at 9.999 s, at 10 s); `runAll` runs everything regardless of delay.
 * `timers` is the same queue behind the shared time port, for code that takes Timers.
 */
import type { Timers } from "@fleetback/protocol";
import type { SetTimer } from "../tickers/set-timer.js";

export interface ManualTimers {
  setTimer: SetTimer;
  timers: Timers;
  /** Timers set and neither run nor cancelled. */
  pending(): number;
  /** Delays still to go of the pending timers, earliest first. */
  pendingDelays(): number[];
  /** Runs every pending timer once, in the order they were set. */
  runAll(): void;
  /** Moves time forward by `ms`, running the timers that fall due, in due order. */
  advance(ms: number): void;
}

export function createManualTimers(): ManualTimers {
  const timers = new Map<number, { dueAt: number; run: () => void }>();
  let now = 0;
  let next = 0;
  const setTimer: SetTimer = (run, ms) => {
    const id = next++;
    timers.set(id, { dueAt: now + ms, run });
    return () => {
      timers.delete(id);
    };
  };
  return {
    setTimer,
    timers: {
      after: (ms, callback) => setTimer(callback, ms),
      every(ms, callback) {
        // Re-armed before the callback runs, so a callback that cancels stops the next one.
        let cancel = () => {};
        const arm = () => {
          cancel = setTimer(() => {
            arm();
            callback();
          }, ms);
        };
        arm();
        return () => cancel();
      },
    },
    pending: () => timers.size,
    pendingDelays: () => [...timers.values()].map((timer) => timer.dueAt - now).sort((a, b) => a - b),
    runAll() {
      const due = [...timers.values()];
      timers.clear();
      for (const timer of due) {
        timer.run();
      }
    },
    advance(ms) {
      const target = now + ms;
      for (;;) {
        let first: [number, { dueAt: number; run: () => void }] | undefined;
        for (const entry of timers) {
          if (entry[1].dueAt <= target && (first === undefined || entry[1].dueAt < first[1].dueAt)) {
            first = entry;
          }
        }
        if (first === undefined) {
          break;
        }
        timers.delete(first[0]);
        now = first[1].dueAt;
        first[1].run();
      }
      now = target;
    },
  };
}
