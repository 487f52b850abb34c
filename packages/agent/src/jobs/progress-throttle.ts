/**
 * @module jobs/progress-throttle
 * At most one `job.progress` per second per job, the first at once (PROGRESS_MIN_INTERVAL_MS in
 * packages/protocol/PROTOCOL.md). Updates that
 * arrive inside the window replace each other; the latest goes out when the window ends, and
 * `flush()` sends whatever is still held before the job's `job.finished`.
 */
import { PROGRESS_MIN_INTERVAL_MS } from "@fleetback/protocol";
import type { Clock } from "../time/clock.js";
import type { CancelTimer, Timers } from "../time/timers.js";
import type { ProgressState } from "./job-types.js";

export interface ProgressThrottle {
  push(progress: ProgressState): void;
  /** Sends the held update, if any, and stops the timer. */
  flush(): void;
}

export function createProgressThrottle(
  send: (progress: ProgressState) => void,
  timers: Timers,
  clock: Clock,
  intervalMs = PROGRESS_MIN_INTERVAL_MS,
): ProgressThrottle {
  let lastSentAt: number | undefined;
  let held: ProgressState | undefined;
  let cancelTimer: CancelTimer | undefined;

  const sendNow = (progress: ProgressState) => {
    held = undefined;
    lastSentAt = clock.now().getTime();
    send(progress);
  };
  const sendHeld = () => {
    cancelTimer = undefined;
    if (held !== undefined) {
      sendNow(held);
    }
  };

  return {
    push(progress) {
      const now = clock.now().getTime();
      if (lastSentAt === undefined || now - lastSentAt >= intervalMs) {
        cancelTimer?.();
        cancelTimer = undefined;
        sendNow(progress);
        return;
      }
      held = progress;
      cancelTimer ??= timers.after(lastSentAt + intervalMs - now, sendHeld);
    },
    flush() {
      cancelTimer?.();
      sendHeld();
    },
  };
}
