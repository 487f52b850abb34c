/**
 * @module retention/zoned-time
 * A snapshot's time as restic stored it: the wall clock of the machine that made it, with that
 * zone's offset. The wire and the database keep the instant only (UTC); restic buckets
 * hourly, daily, weekly and monthly rules by the stored wall clock, so the planner gets the instant
 * written in the host's zone (its hello's `time_zone`, else FLEETBACK_TZ), which is that wall clock
 * whenever restic ran in the host's zone.
 */
const formats = new Map<string, Intl.DateTimeFormat>();

function formatOf(timeZone: string): Intl.DateTimeFormat {
  let format = formats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat("en-US", {
      timeZone,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
      hourCycle: "h23",
      timeZoneName: "longOffset",
    });
    formats.set(timeZone, format);
  }
  return format;
}

/** `2026-11-28T03:00:00.000+01:00` for 02:00 UTC in Europe/Berlin; milliseconds kept. */
export function zonedRfc3339(at: Date, timeZone: string): string {
  const parts = Object.fromEntries(
    formatOf(timeZone)
      .formatToParts(at)
      .map((part) => [part.type, part.value]),
  );
  // "GMT+01:00", or "GMT" for a zero offset.
  const offset = (parts.timeZoneName ?? "GMT").replace(/^GMT/, "") || "+00:00";
  const millis = String(at.getUTCMilliseconds()).padStart(3, "0");
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}.${millis}${offset}`;
}
