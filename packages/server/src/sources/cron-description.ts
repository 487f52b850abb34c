/**
 * @module sources/cron-description
 * A schedule as a person reads it (issue 17): an English sentence for the common cron shapes
 * (every N minutes, hourly at :MM, daily at HH:MM, weekdays, given weekdays, given days of the
 * month) and its next fire times in the zone the schedule is read in. Anything else has no
 * sentence (undefined): the page then shows the expression alone rather than a guess. Fire times
 * are cron-parser's, as the agent's scheduler and freshness/cron-times.ts compute them.
 */
import { CronExpressionParser } from "cron-parser";

const DAY_NAMES = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const DAY_ALIASES: Record<string, number> = { sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 };

const NUMBER = /^\d{1,2}$/;

function englishList(items: readonly string[]): string {
  if (items.length <= 1) {
    return items.join("");
  }
  return `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
}

function ordinal(n: number): string {
  const tens = n % 100;
  const suffix =
    tens >= 11 && tens <= 13
      ? "th"
      : (({ 1: "st", 2: "nd", 3: "rd" } as Record<number, string>)[n % 10] ?? "th");
  return `${n}${suffix}`;
}

/** A comma list of plain numbers within [min, max], or undefined for anything else. */
function numberList(field: string, min: number, max: number): number[] | undefined {
  const values: number[] = [];
  for (const part of field.split(",")) {
    if (!NUMBER.test(part)) {
      return undefined;
    }
    const value = Number(part);
    if (value < min || value > max) {
      return undefined;
    }
    values.push(value);
  }
  return [...new Set(values)].sort((a, b) => a - b);
}

function dayNumber(token: string): number | undefined {
  const lower = token.toLowerCase();
  if (lower in DAY_ALIASES) {
    return DAY_ALIASES[lower];
  }
  if (NUMBER.test(token) && Number(token) <= 7) {
    return Number(token) % 7;
  }
  return undefined;
}

/** Days of the week from a list of days and ranges (`1-5`, `mon,wed,fri`, `0,6`); 0 is Sunday. */
function weekdays(field: string): number[] | undefined {
  const days = new Set<number>();
  for (const part of field.split(",")) {
    const [from, to, ...rest] = part.split("-");
    if (rest.length > 0 || from === undefined) {
      return undefined;
    }
    const start = dayNumber(from);
    // 7 is Sunday too, so "5-7" ends on Sunday: read the end before folding it to 0.
    const endRaw = to === undefined ? start : to === "7" ? 7 : dayNumber(to);
    if (start === undefined || endRaw === undefined || endRaw < start) {
      return undefined;
    }
    for (let day = start; day <= endRaw; day++) {
      days.add(day % 7);
    }
  }
  // Monday first, Sunday last, as a week is read.
  return [...days].sort((a, b) => ((a + 6) % 7) - ((b + 6) % 7));
}

function pad(n: number): string {
  return String(n).padStart(2, "0");
}

/** The sentence for `cron` (5 fields, or 6 with seconds first), or undefined for an uncommon shape. */
export function describeCron(cron: string): string | undefined {
  let fields = cron.trim().split(/\s+/);
  if (fields.length === 6) {
    // Seconds first: only a schedule firing at second 0 reads like a 5-field one.
    if (fields[0] !== "0") {
      return undefined;
    }
    fields = fields.slice(1);
  }
  if (fields.length !== 5) {
    return undefined;
  }
  const [minute = "", hour = "", dom = "", month = "", dow = ""] = fields;
  if (month !== "*") {
    return undefined;
  }
  const everyDay = dom === "*" && (dow === "*" || dow === "?");

  // Every N minutes / every minute.
  if (hour === "*" && everyDay) {
    if (minute === "*" || minute === "*/1") {
      return "Every minute";
    }
    const step = /^\*\/(\d{1,2})$/.exec(minute);
    if (step) {
      const n = Number(step[1]);
      return n >= 1 && n < 60 ? `Every ${n} minutes` : undefined;
    }
  }
  const minutes = numberList(minute, 0, 59);
  if (minutes?.length !== 1) {
    return undefined;
  }
  const mm = pad(minutes[0] ?? 0);

  // Hourly at :MM, every N hours.
  if (hour === "*" && everyDay) {
    return `Every hour at :${mm}`;
  }
  const hourStep = /^\*\/(\d{1,2})$/.exec(hour);
  if (hourStep && everyDay) {
    const n = Number(hourStep[1]);
    return n >= 1 && n < 24 ? `Every ${n} hours at :${mm}, from 00:${mm}` : undefined;
  }

  const hours = numberList(hour, 0, 23);
  if (hours === undefined) {
    return undefined;
  }
  const at = `at ${englishList(hours.map((h) => `${pad(h)}:${mm}`))}`;
  if (everyDay) {
    return `Every day ${at}`;
  }
  // Both day fields restricted fire on either (cron's OR): no sentence for that.
  if (dom === "*") {
    const days = weekdays(dow);
    if (days === undefined || days.length === 0) {
      return undefined;
    }
    if (days.length === 7) {
      return `Every day ${at}`;
    }
    if (days.join(",") === "1,2,3,4,5") {
      return `Every weekday (Monday to Friday) ${at}`;
    }
    if (days.join(",") === "6,0") {
      return `Every Saturday and Sunday ${at}`;
    }
    return `Every ${englishList(days.map((day) => DAY_NAMES[day] ?? ""))} ${at}`;
  }
  if (dow === "*" || dow === "?") {
    const monthDays = numberList(dom, 1, 31);
    if (monthDays === undefined) {
      return undefined;
    }
    return `On the ${englishList(monthDays.map(ordinal))} of every month ${at}`;
  }
  return undefined;
}

/** The next `count` fire times strictly after `after`, read in `zone`; fewer when none are left. */
export function nextRuns(cron: string, zone: string, after: Date, count = 3): Date[] {
  const runs: Date[] = [];
  try {
    const expression = CronExpressionParser.parse(cron, { tz: zone, currentDate: after });
    while (runs.length < count) {
      runs.push(new Date(expression.next().getTime()));
    }
  } catch {
    // No date left in range (30 February), or an expression stored before validation tightened.
  }
  return runs;
}

export interface ScheduleTiming {
  /** The sentence, or null when the shape has none (show the expression). */
  description: string | null;
  /** The next three fire times. */
  next_runs: Date[];
  /** The IANA zone the expression is read in: the host's, else FLEETBACK_TZ. */
  time_zone: string;
}

export function scheduleTiming(cron: string, zone: string, now: Date): ScheduleTiming {
  return { description: describeCron(cron) ?? null, next_runs: nextRuns(cron, zone, now), time_zone: zone };
}
