/**
 * @module health/cron-times
 * Fire times of cron expressions read in a given zone, for judging freshness. An expression is
 * parsed once per (cron, zone) and then moved about with reset(), since a fleet evaluation asks
 * the same few expressions tens of thousands of times. Uses cron-parser, as the agent's scheduler
 * does, so both agree on every instant, daylight-saving changes included.
 */
import { type CronExpression, CronExpressionParser } from "cron-parser";

export interface CronTimes {
  /** The first fire strictly after `after`; undefined for an expression that never fires again. */
  nextAfter(cron: string, zone: string, after: Date): Date | undefined;
  /** The last fire strictly before `before`. */
  prevBefore(cron: string, zone: string, before: Date): Date | undefined;
}

/** A cache of parsed expressions; an unreadable one (stored before validation tightened) is undefined. */
export function createCronTimes(): CronTimes {
  const parsed = new Map<string, CronExpression | null>();
  function expression(cron: string, zone: string): CronExpression | undefined {
    const key = `${zone}\u0000${cron}`;
    let found = parsed.get(key);
    if (found === undefined) {
      try {
        found = CronExpressionParser.parse(cron, { tz: zone });
      } catch {
        found = null;
      }
      parsed.set(key, found);
    }
    return found ?? undefined;
  }
  function step(cron: string, zone: string, from: Date, direction: "next" | "prev"): Date | undefined {
    const expr = expression(cron, zone);
    if (!expr) {
      return undefined;
    }
    expr.reset(from);
    try {
      return (direction === "next" ? expr.next() : expr.prev()).toDate();
    } catch {
      // cron-parser throws when no date is left in range (e.g. 30 February).
      return undefined;
    }
  }
  return {
    nextAfter: (cron, zone, after) => step(cron, zone, after, "next"),
    prevBefore: (cron, zone, before) => step(cron, zone, before, "prev"),
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
