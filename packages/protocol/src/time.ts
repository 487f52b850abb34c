/**
 * @module time
 * The one time port the server and the agent share: a clock and timers, injected so tickers,
 * deadlines, heartbeats and backoff are tested by moving time by hand while sockets and processes
 * stay real. The system adapters below are the only place either process touches the global
 * clock and timer functions; everything else takes a Clock or Timers.
 */

export interface Clock {
  now(): Date;
}

/** Cancels a scheduled callback; calling it twice, or after the callback ran, is harmless. */
export type CancelTimer = () => void;

export interface TimerOptions {
  /** The timer does not keep the process alive on its own (a watchdog over other work). */
  unref?: boolean;
}

export interface Timers {
  after(ms: number, callback: () => void, options?: TimerOptions): CancelTimer;
  every(ms: number, callback: () => void, options?: TimerOptions): CancelTimer;
}

export const systemClock: Clock = { now: () => new Date() };

/** Node's timer handles can be unref'd; the port keeps that optional for other runtimes. */
function unrefIf(handle: unknown, options: TimerOptions | undefined): void {
  if (options?.unref) {
    (handle as { unref?: () => void }).unref?.();
  }
}

export const systemTimers: Timers = {
  after(ms, callback, options) {
    const handle = setTimeout(callback, ms);
    unrefIf(handle, options);
    return () => clearTimeout(handle);
  },
  every(ms, callback, options) {
    const handle = setInterval(callback, ms);
    unrefIf(handle, options);
    return () => clearInterval(handle);
  },
};

/** A promise that resolves after `ms` on the given timers. */
export function sleep(timers: Timers, ms: number): Promise<void> {
  return new Promise((resolve) => {
    timers.after(ms, resolve);
  });
}
