/**
 * @module retention/restic-duration
 * restic's `--keep-within*` durations (`7d`, `1y2m3d4h`): how restic names them in its reasons and
 * where the window they open begins. The window is calendar arithmetic on the newest snapshot's own
 * wall clock (`latest.AddDate(-y, -m, -d).Add(-h hours)`), so "1m" back from 31 March 2024 is
 * 2 March (31 February normalised), and hours are counted after the calendar part.
 */
import { isResticDuration } from "@fleetback/protocol";
import { type Instant, type ResticTime, wallSeconds } from "./restic-time.js";

export interface ResticDuration {
  years: number;
  months: number;
  days: number;
  hours: number;
}

/** A duration of the wire's form; undefined for anything else or a part too large to count exactly. */
export function parseResticDuration(text: string): ResticDuration | undefined {
  if (!isResticDuration(text)) {
    return undefined;
  }
  const parts: ResticDuration = { years: 0, months: 0, days: 0, hours: 0 };
  const fields = { y: "years", m: "months", d: "days", h: "hours" } as const;
  for (const [, amount, unit] of text.matchAll(/(\d+)([ymdh])/g)) {
    const value = Number(amount);
    if (!Number.isSafeInteger(value)) {
      return undefined;
    }
    parts[fields[unit as keyof typeof fields]] = value;
  }
  return parts;
}

/** restic ignores a duration whose every part is zero, as if the flag were not given. */
export function isZeroDuration(duration: ResticDuration): boolean {
  return duration.years === 0 && duration.months === 0 && duration.days === 0 && duration.hours === 0;
}

/** restic's spelling in reasons: the non-zero parts in y, m, d, h order (`0y7d` reads `7d`). */
export function formatResticDuration(duration: ResticDuration): string {
  return [
    [duration.years, "y"],
    [duration.months, "m"],
    [duration.days, "d"],
    [duration.hours, "h"],
  ]
    .filter(([amount]) => amount !== 0)
    .map(([amount, unit]) => `${amount}${unit}`)
    .join("");
}

/**
 * The instant a window of `duration` back from `latest` starts; a snapshot is inside when it is
 * strictly later. Undefined when the start lies before any time Date can hold: then every
 * snapshot is inside, as in restic. The calendar step uses the stored offset throughout. restic
 * does the same unless its own machine's zone has that offset at that instant (Go then decodes the
 * time into the local zone): across that zone's daylight-saving change its start moves by the
 * shift. Whoever's restic it would have been, the server's answer is the one that is applied.
 */
export function windowStart(latest: ResticTime, duration: ResticDuration): Instant | undefined {
  const wall = wallSeconds(
    latest.year - duration.years,
    latest.month - duration.months,
    latest.day - duration.days,
    latest.hour,
    latest.minute,
    latest.second,
  );
  if (Number.isNaN(wall)) {
    return undefined;
  }
  return { seconds: wall - latest.offsetMinutes * 60 - duration.hours * 3600, nanos: latest.nanos };
}
