/**
 * @module tickers/set-timer
 * One-shot timers as an injectable port: deadlines and flush delays take a SetTimer, so tests
 * can run them at once or on demand instead of waiting.
 */

/** Runs `run` once after `ms`; the returned function cancels it. */
export type SetTimer = (run: () => void, ms: number) => () => void;

export const realSetTimer: SetTimer = (run, ms) => {
  const timer = setTimeout(run, ms);
  return () => clearTimeout(timer);
};
