/**
 * @module tickers/set-timer
 * One-shot timers as an injectable port: deadlines and flush delays take a SetTimer, so tests
 * can run them at once or on demand instead of waiting. The real one is the shared time port's.
 */
import { systemTimers } from "@fleetback/protocol";

/** Runs `run` once after `ms`; the returned function cancels it. */
export type SetTimer = (run: () => void, ms: number) => () => void;

export const realSetTimer: SetTimer = (run, ms) => systemTimers.after(ms, run);
