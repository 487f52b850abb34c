/**
 * @module maintenance/due-slot
 * When a maintenance cadence is due. A cadence is a cron expression read in the server's time
 * zone; its due slot is the latest occurrence at or before now. A slot is dispatched only when it
 * is later than the slot dispatched last (or, for a record that never ran, later than the record's
 * creation), so missed slots collapse into one run and no slot ever runs twice.
 */
import { CronExpressionParser } from "cron-parser";

/** The latest occurrence of `cron` at or before `now`, in zone `tz`. */
export function latestSlot(cron: string, tz: string, now: Date): Date {
  // prev() is strictly before currentDate; one millisecond later makes "at now" count.
  const parsed = CronExpressionParser.parse(cron, { currentDate: new Date(now.getTime() + 1), tz });
  return parsed.prev().toDate();
}

/** The next occurrence after `now`, for display. */
export function nextSlot(cron: string, tz: string, now: Date): Date {
  return CronExpressionParser.parse(cron, { currentDate: now, tz }).next().toDate();
}

/** The slot to dispatch now, if any: the latest one, when it is later than `after`. */
export function dueSlot(cron: string, tz: string, now: Date, after: Date): Date | undefined {
  const slot = latestSlot(cron, tz, now);
  return slot.getTime() > after.getTime() ? slot : undefined;
}
