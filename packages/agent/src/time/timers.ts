/**
 * @module time/timers
 * Timers are a port so that heartbeat cadence, reconnect backoff and claim polling can be driven
 * by hand in tests while the sockets underneath stay real.
 */

/** Cancels a scheduled callback; calling it twice, or after the callback ran, is harmless. */
export type CancelTimer = () => void;

export interface TimerOptions {
  /** The timer does not keep the process alive on its own (a watchdog over other work). */
  unref?: boolean;
}

export interface Timers {
  after(ms: number, callback: () => void, options?: TimerOptions): CancelTimer;
  every(ms: number, callback: () => void): CancelTimer;
}

export const systemTimers: Timers = {
  after(ms, callback, options) {
    const handle = setTimeout(callback, ms);
    if (options?.unref) {
      handle.unref();
    }
    return () => clearTimeout(handle);
  },
  every(ms, callback) {
    const handle = setInterval(callback, ms);
    return () => clearInterval(handle);
  },
};

/** A promise that resolves after `ms` on the given timers. */
export function sleep(timers: Timers, ms: number): Promise<void> {
  return new Promise((resolve) => {
    timers.after(ms, resolve);
  });
}
