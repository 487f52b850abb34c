/**
 * @module retention/restic-time
 * A snapshot's time as restic's forget reads it. restic sorts and measures to the nanosecond, and
 * it buckets hours, days, weeks, months and years by the wall clock of the offset the snapshot was
 * stored with (Go's `Year()`, `Day()`, `ISOWeek()` on the decoded time), not by UTC and not by the
 * zone of the machine running forget: a snapshot taken at 00:10 +05:30 belongs to that day,
 * although in UTC it is the evening before. So the planner needs the time as restic stored it.
 */

/** An instant to the nanosecond: restic orders snapshots and compares cutoffs at that precision. */
export interface Instant {
  /** Whole seconds since the epoch (rounded down). */
  seconds: number;
  /** Nanoseconds past `seconds`, 0 to 999,999,999. */
  nanos: number;
}

export interface ResticTime extends Instant {
  /** Minutes east of UTC of the stored offset. */
  offsetMinutes: number;
  /** The wall clock at that offset; `month` 1 to 12. */
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:Z|([+-])(\d{2}):(\d{2}))$/;

/** Seconds since the epoch of a wall clock read as UTC; NaN beyond the range of Date. */
export function wallSeconds(
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
): number {
  // setUTCFullYear, unlike Date.UTC, does not read years 0 to 99 as 1900 to 1999. It normalises
  // an overflowing month, then day, the way Go's time.Date does (31 February is 3 March).
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  return date.getTime() / 1000;
}

/** RFC 3339 as restic writes it (`Z` or `±hh:mm`, up to nine fraction digits); undefined otherwise. */
export function parseResticTime(text: string): ResticTime | undefined {
  const match = RFC3339.exec(text);
  if (match === null) {
    return undefined;
  }
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const fraction = match[7] ?? "";
  const sign = match[8] === "-" ? -1 : 1;
  const offsetMinutes = sign * (Number(match[9] ?? 0) * 60 + Number(match[10] ?? 0));
  const wall = wallSeconds(year, month, day, hour, minute, second);
  const check = new Date(wall * 1000);
  // A field out of range (13th month, 30 February, 24 o'clock) would be normalised by Date; Go refuses it.
  if (
    Number.isNaN(wall) ||
    check.getUTCMonth() + 1 !== month ||
    check.getUTCDate() !== day ||
    check.getUTCHours() !== hour ||
    Math.abs(offsetMinutes) >= 24 * 60
  ) {
    return undefined;
  }
  return {
    seconds: wall - offsetMinutes * 60,
    nanos: Number(fraction.padEnd(9, "0")),
    offsetMinutes,
    year,
    month,
    day,
    hour,
    minute,
    second,
  };
}

export function instantOf(date: Date): Instant {
  const millis = date.getTime();
  const seconds = Math.floor(millis / 1000);
  return { seconds, nanos: (millis - seconds * 1000) * 1_000_000 };
}

/** Negative when `a` is earlier than `b`. */
export function compareInstants(a: Instant, b: Instant): number {
  return a.seconds - b.seconds || a.nanos - b.nanos;
}

/** Go's `YYYYMMDDHH` bucket of restic's hourly rules. */
export function hourBucket(time: ResticTime): number {
  return time.year * 1_000_000 + time.month * 10_000 + time.day * 100 + time.hour;
}

export function dayBucket(time: ResticTime): number {
  return time.year * 10_000 + time.month * 100 + time.day;
}

/** `YYYYWW` of the ISO week (Monday first; week 1 holds the year's first Thursday), as Go's ISOWeek. */
export function weekBucket(time: ResticTime): number {
  const date = new Date(0);
  date.setUTCFullYear(time.year, time.month - 1, time.day);
  const sinceMonday = (date.getUTCDay() + 6) % 7;
  date.setUTCDate(date.getUTCDate() - sinceMonday + 3);
  const thursdayYear = date.getUTCFullYear();
  const januaryFirst = new Date(0);
  januaryFirst.setUTCFullYear(thursdayYear, 0, 1);
  const week = Math.floor((date.getTime() - januaryFirst.getTime()) / (7 * 86_400_000)) + 1;
  return thursdayYear * 100 + week;
}

export function monthBucket(time: ResticTime): number {
  return time.year * 100 + time.month;
}

export function yearBucket(time: ResticTime): number {
  return time.year;
}
