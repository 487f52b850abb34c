/**
 * @module health/local-time
 * Times on the dashboard as an operator reads them: day and minute in a given IANA zone (the
 * group's schedule zone, or FLEETBACK_TZ), with the zone's abbreviation, so "03:00" never leaves
 * the reader guessing which 03:00.
 */
const formats = new Map<string, Intl.DateTimeFormat>();

export function formatLocalTime(at: Date, timeZone: string): string {
  let format = formats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat("en-GB", {
      timeZone,
      month: "short",
      day: "numeric",
      hour: "2-digit",
      minute: "2-digit",
      hourCycle: "h23",
      timeZoneName: "short",
    });
    formats.set(timeZone, format);
  }
  return format.format(at);
}
