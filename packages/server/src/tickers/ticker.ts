/**
 * @module tickers/ticker
 * Runs a tick function every `periodMs` in production. A tick never overlaps the previous one
 * (a slow database must not pile ticks up), a failing tick is logged and the next one runs as
 * usual, and `stop()` waits for a tick in flight so the database can close after it.
 */
import { systemTimers, type Timers } from "@fleetback/protocol";
import type { Logger } from "../log.js";

export interface Ticker {
  stop(): Promise<void>;
}

export function startTicker(
  tick: () => Promise<unknown>,
  periodMs: number,
  options: { name: string; log: Logger; timers?: Timers },
): Ticker {
  let running: Promise<void> | undefined;
  const cancel = (options.timers ?? systemTimers).every(
    periodMs,
    () => {
      if (running) {
        options.log.debug({ ticker: options.name }, "previous tick still running; skipped");
        return;
      }
      running = tick()
        .then(
          () => undefined,
          (err: unknown) => {
            options.log.error({ err, ticker: options.name }, "tick failed");
          },
        )
        .finally(() => {
          running = undefined;
        });
    },
    { unref: true },
  );
  return {
    async stop() {
      cancel();
      await running;
    },
  };
}
