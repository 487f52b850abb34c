// The one place sizes, durations and moments are put into words (issue 36.2), shared by the
// server's templates (src/format.ts re-exports it with types) and the browser's scripts, so a
// figure the job page updates live reads exactly like the one a reload renders. A plain ES module
// without imports: Node loads it as it is, and a page loads it as a module script, which also
// hands it to the classic scripts (app.js, job-stream.js) as `window.fleetbackFormat`.

const UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];

/** Binary units, as restic prints them: "1.50 KiB", "64.1 KiB"; "–" for no size. */
export function formatBytes(value) {
  const bytes = typeof value === "number" ? value : Number(value);
  if (value === null || value === "" || !Number.isFinite(bytes) || bytes < 0) {
    return "–";
  }
  let size = bytes;
  let unit = 0;
  while (size >= 1024 && unit < UNITS.length - 1) {
    size /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${size} B` : `${size.toFixed(size < 10 ? 2 : 1)} ${UNITS[unit]}`;
}

/** Seconds as "0.4 s", "4 s", "2 min 5 s", "2 h 1 min"; "–" for no duration. */
export function formatDuration(value) {
  const seconds = typeof value === "number" ? value : Number(value);
  if (value === null || value === "" || !Number.isFinite(seconds) || seconds < 0) {
    return "–";
  }
  // A fraction matters only for short runs: restic's summaries say 0.4 s, and "0 s" would hide it.
  if (seconds < 10 && !Number.isInteger(seconds)) {
    return `${seconds.toFixed(1)} s`;
  }
  if (seconds < 60) {
    return `${Math.round(seconds)} s`;
  }
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) {
    return `${minutes} min ${Math.round(seconds % 60)} s`;
  }
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** A Date, an ISO string or epoch milliseconds as a valid Date; undefined for anything else. */
export function toDate(value) {
  const date =
    value instanceof Date
      ? value
      : typeof value === "string" || typeof value === "number"
        ? new Date(value)
        : undefined;
  return date && value !== "" && Number.isFinite(date.getTime()) ? date : undefined;
}

/**
 * ISO 8601 in UTC ("2026-11-28T10:19:00Z"): the datetime attribute and the hover. Milliseconds
 * only where there are some, so an end of day (23:59:59.999) stays the moment it is.
 */
export function formatIso(value) {
  const date = toDate(value);
  return date ? date.toISOString().replace(/\.000Z$/, "Z") : "–";
}

// Month names are ours, not the locale's: en-GB writes September "Sept" in newer ICU data, and
// the server's Node and the reader's browser need not carry the same data.
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
// Building an Intl.DateTimeFormat is the costly part; a page prints dozens of times in one zone.
const formats = new Map();

function partsIn(date, timeZone) {
  const key = timeZone || "";
  let format = formats.get(key);
  if (!format) {
    try {
      format = new Intl.DateTimeFormat("en-GB", {
        timeZone: timeZone || undefined,
        year: "numeric",
        month: "numeric",
        day: "numeric",
        hour: "2-digit",
        minute: "2-digit",
        hourCycle: "h23",
        timeZoneName: "short",
      });
    } catch {
      // A zone this runtime does not know: UTC, which the zone name then says.
      return partsIn(date, "UTC");
    }
    formats.set(key, format);
  }
  const parts = {};
  for (const part of format.formatToParts(date)) {
    parts[part.type] = part.value;
  }
  return parts;
}

/**
 * A moment as its reader's wall clock with the zone that clock is in: "28 Nov, 10:19 CET", with
 * the year when it is not the current one ("3 Mar 2025, 09:00 UTC"). The zone's abbreviation (or
 * its offset, "GMT-5", where English has none) is what tells the two 02:30 of a DST night apart.
 * `timeZone` is an IANA zone, or undefined for the runtime's own; `now` decides the year rule.
 */
export function formatTime(value, timeZone, now) {
  const date = toDate(value);
  if (!date) {
    return "–";
  }
  const at = partsIn(date, timeZone);
  const current = partsIn(toDate(now) ?? new Date(), timeZone);
  const month = MONTHS[Number(at.month) - 1] ?? at.month;
  const year = at.year === current.year ? "" : ` ${at.year}`;
  return `${Number(at.day)} ${month}${year}, ${at.hour}:${at.minute} ${at.timeZoneName}`;
}

if (typeof window !== "undefined") {
  window.fleetbackFormat = Object.freeze({ formatBytes, formatDuration, formatIso, formatTime, toDate });
}
