/**
 * @module freshness/cron-times
 * Fire times of cron expressions read in a given zone, for judging freshness. The answers are
 * cron-parser's, as the agent's scheduler uses it, so both agree on every instant, daylight-saving
 * changes included. cron-parser is slow (about 0.1–0.5 ms a step), and a fleet evaluation asks the
 * same few (cron, zone) pairs tens of thousands of times about nearby instants, so each pair keeps
 * a run of consecutive fires it has already walked: a question inside the run is a binary search,
 * one just outside extends the run by a few steps, and anything farther is asked of cron-parser
 * directly. Kept across ticks, the runs grow at their recent end and are trimmed away from the
 * instant last asked about, so each pair holds at most MAX_RUN fires.
 */
import { CronExpressionParser } from "cron-parser";

export interface CronTimes {
  /** The first fire strictly after `after`; undefined for an expression that never fires again. */
  nextAfter(cron: string, zone: string, after: Date): Date | undefined;
  /** The last fire strictly before `before`. */
  prevBefore(cron: string, zone: string, before: Date): Date | undefined;
}

/** Fires kept per (cron, zone): a week of a per-minute schedule, a day and a half of a per-10-s one. */
export const MAX_RUN = 10_080;
/** How many steps a run may grow by to answer one question; farther ones go to cron-parser alone. */
const MAX_EXTEND = 64;

interface Walker {
  cron: string;
  zone: string;
  /** Consecutive fires (ms), ascending: every fire between the first and the last is here. */
  run: number[];
}

/** The index of the first element greater than `t`. */
function upperBound(run: readonly number[], t: number): number {
  let low = 0;
  let high = run.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((run[mid] ?? 0) <= t) {
      low = mid + 1;
    } else {
      high = mid;
    }
  }
  return low;
}

/**
 * One step from `from`, strictly after or before it. A new expression per step, with
 * `currentDate`, exactly as the agent's scheduler asks: `reset()` on a parsed one answers a
 * seconds schedule's next fire with the current instant itself.
 */
function step(w: Walker, from: number, direction: "next" | "prev"): number | undefined {
  try {
    const expr = CronExpressionParser.parse(w.cron, { tz: w.zone, currentDate: new Date(from) });
    return (direction === "next" ? expr.next() : expr.prev()).getTime();
  } catch {
    // cron-parser throws when no date is left in range (e.g. 30 February).
    return undefined;
  }
}

/** Grows the run forward until its last fire is after `t`, within MAX_EXTEND steps. */
function extendForward(walker: Walker, t: number): boolean {
  const { run } = walker;
  for (let steps = 0; (run.at(-1) ?? Number.POSITIVE_INFINITY) <= t; steps++) {
    const next = steps < MAX_EXTEND ? step(walker, run.at(-1) ?? t, "next") : undefined;
    if (next === undefined) {
      return false;
    }
    run.push(next);
  }
  return true;
}

/** Keeps at most MAX_RUN fires, dropping those farthest from the one just asked about. */
function trim(walker: Walker, index: number): void {
  const { run } = walker;
  const excess = run.length - MAX_RUN;
  if (excess <= 0) {
    return;
  }
  const start = Math.min(Math.max(0, index - (MAX_RUN >> 1)), excess);
  run.splice(start + MAX_RUN);
  run.splice(0, start);
}

/** Grows the run backward until its first fire is before `t`, within MAX_EXTEND steps. */
function extendBackward(walker: Walker, t: number): boolean {
  const { run } = walker;
  const added: number[] = [];
  let first = run[0] ?? t;
  while (first >= t) {
    const prev =
      added.length < MAX_EXTEND && run.length + added.length < MAX_RUN
        ? step(walker, first, "prev")
        : undefined;
    if (prev === undefined) {
      return false;
    }
    added.push(prev);
    first = prev;
  }
  run.unshift(...added.reverse());
  return true;
}

export function createCronTimes(): CronTimes {
  const walkers = new Map<string, Walker | null>();
  function walker(cron: string, zone: string): Walker | undefined {
    const key = `${zone}\u0000${cron}`;
    let found = walkers.get(key);
    if (found === undefined) {
      try {
        CronExpressionParser.parse(cron, { tz: zone });
        found = { cron, zone, run: [] };
      } catch {
        // An expression stored before validation tightened, or a zone Intl no longer knows.
        found = null;
      }
      walkers.set(key, found);
    }
    return found ?? undefined;
  }
  /** Seeds an empty run with the two fires around `t`, so later questions near it are searches. */
  function seed(w: Walker, t: number): boolean {
    const next = step(w, t, "next");
    const prev = next === undefined ? undefined : step(w, next, "prev");
    if (next === undefined || prev === undefined) {
      return false;
    }
    w.run.push(prev, next);
    return true;
  }
  return {
    nextAfter(cron, zone, after) {
      const w = walker(cron, zone);
      if (!w) {
        return undefined;
      }
      const t = after.getTime();
      const ready =
        (w.run.length > 0 || seed(w, t)) &&
        ((w.run[0] ?? 0) <= t || extendBackward(w, t + 1)) &&
        extendForward(w, t);
      if (!ready) {
        const direct = step(w, t, "next");
        return direct === undefined ? undefined : new Date(direct);
      }
      const index = upperBound(w.run, t);
      const found = w.run[index];
      trim(w, index);
      return found === undefined ? undefined : new Date(found);
    },
    prevBefore(cron, zone, before) {
      const w = walker(cron, zone);
      if (!w) {
        return undefined;
      }
      const t = before.getTime();
      const ready =
        (w.run.length > 0 || seed(w, t - 1)) &&
        extendBackward(w, t) &&
        ((w.run.at(-1) ?? 0) >= t || extendForward(w, t - 1));
      if (!ready) {
        const direct = step(w, t, "prev");
        return direct === undefined ? undefined : new Date(direct);
      }
      // The last fire strictly before t: one before the first that is >= t.
      const index = upperBound(w.run, t - 1) - 1;
      const found = w.run[index];
      trim(w, index);
      return found === undefined ? undefined : new Date(found);
    },
  };
}

/**
 * The schedule's period around the fire `fire`: the gap back to the fire before it. It follows the
 * calendar: 72 h from a Friday to a Monday of a weekday schedule, 23 or 25 h across a
 * daylight-saving change of a daily one.
 */
export function intervalEndingAt(
  times: CronTimes,
  cron: string,
  zone: string,
  fire: Date,
): number | undefined {
  const before = times.prevBefore(cron, zone, fire);
  return before ? fire.getTime() - before.getTime() : undefined;
}
