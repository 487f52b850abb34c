/**
 * @module testing/manual-timers
 * A SetTimer whose timers run only when the test says so: deadlines without waiting for them.
 */
import type { SetTimer } from "../tickers/set-timer.js";

export interface ManualTimers {
  setTimer: SetTimer;
  /** Timers set and neither run nor cancelled. */
  pending(): number;
  /** Runs every pending timer once, in the order they were set. */
  runAll(): void;
}

export function createManualTimers(): ManualTimers {
  const timers = new Map<number, () => void>();
  let next = 0;
  return {
    setTimer(run) {
      const id = next++;
      timers.set(id, run);
      return () => {
        timers.delete(id);
      };
    },
    pending: () => timers.size,
    runAll() {
      const due = [...timers.entries()];
      timers.clear();
      for (const [, run] of due) {
        run();
      }
    },
  };
}
