/**
 * @module notifications/digest-schedule
 * When a channel's digest goes out: daily or weekly at a local time (FLEETBACK_TZ, the zone the
 * maintenance cadences read too), as a cron expression for due-slot.ts. The API and the settings
 * form both describe it with DigestSetting; the row keeps it in three checked columns.
 */
import { DIGEST_PERIODS, type DigestPeriod, type NotificationChannel } from "@fleetback/db";
import { type Static, Type } from "typebox";
import { invalid } from "../errors.js";

export { DIGEST_PERIODS, type DigestPeriod };

export const DIGEST_PERIOD_MS: Record<DigestPeriod, number> = {
  daily: 86_400_000,
  weekly: 7 * 86_400_000,
};

/** Monday first, as a week is read; the value is cron's (0 = Sunday). */
export const WEEKDAYS = [
  { value: 1, label: "Monday" },
  { value: 2, label: "Tuesday" },
  { value: 3, label: "Wednesday" },
  { value: 4, label: "Thursday" },
  { value: 5, label: "Friday" },
  { value: 6, label: "Saturday" },
  { value: 0, label: "Sunday" },
] as const;

export const DIGEST_TIME_PATTERN = "^([01][0-9]|2[0-3]):[0-5][0-9]$";

export const DigestSetting = Type.Object(
  {
    period: Type.Union([Type.Literal("daily"), Type.Literal("weekly")]),
    time: Type.String({ pattern: DIGEST_TIME_PATTERN, description: "local time HH:MM (FLEETBACK_TZ)" }),
    weekday: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 6, description: "weekly only: 0 = Sunday; default Monday" }),
    ),
  },
  { additionalProperties: false },
);
export type DigestSetting = Static<typeof DigestSetting>;

/** The three columns of a setting (all null for none); a weekday on a daily digest is refused. */
export function digestColumns(setting: DigestSetting | null): {
  digestPeriod: DigestPeriod | null;
  digestTime: string | null;
  digestWeekday: number | null;
} {
  if (setting === null) {
    return { digestPeriod: null, digestTime: null, digestWeekday: null };
  }
  if (setting.period === "daily" && setting.weekday !== undefined) {
    throw invalid("digest.weekday: only a weekly digest has a weekday", [
      { field: "digest.weekday", message: "only a weekly digest has a weekday" },
    ]);
  }
  return {
    digestPeriod: setting.period,
    digestTime: setting.time,
    digestWeekday: setting.period === "weekly" ? (setting.weekday ?? 1) : null,
  };
}

export function digestOf(
  row: Pick<NotificationChannel, "digestPeriod" | "digestTime" | "digestWeekday">,
): DigestSetting | null {
  if (row.digestPeriod === null || row.digestTime === null) {
    return null;
  }
  return row.digestPeriod === "weekly"
    ? { period: "weekly", time: row.digestTime, weekday: row.digestWeekday ?? 1 }
    : { period: "daily", time: row.digestTime };
}

/**
 * A local time "HH:MM" as cron: every day, on a weekday (0 = Sunday), or on a day of the month.
 * Digests and scheduled reports are both read in FLEETBACK_TZ by due-slot.ts.
 */
export function localTimeCron(time: string, on: { weekday?: number; monthDay?: number } = {}): string {
  const [hours, minutes] = time.split(":").map(Number);
  return `${minutes} ${hours} ${on.monthDay ?? "*"} * ${on.weekday ?? "*"}`;
}

/** The weekday's name; Monday for none, as a weekly schedule without a day means. */
export function weekdayName(weekday: number | null | undefined): string {
  return WEEKDAYS.find((entry) => entry.value === (weekday ?? 1))?.label ?? "Monday";
}

export function digestCron(setting: DigestSetting): string {
  return localTimeCron(setting.time, setting.period === "weekly" ? { weekday: setting.weekday ?? 1 } : {});
}

export function sameDigest(a: DigestSetting | null, b: DigestSetting | null): boolean {
  return JSON.stringify(digestColumns(a)) === JSON.stringify(digestColumns(b));
}

/** "daily at 08:00", "weekly on Monday at 08:00". */
export function describeDigest(setting: DigestSetting | null): string {
  if (setting === null) {
    return "none";
  }
  if (setting.period === "daily") {
    return `daily at ${setting.time}`;
  }
  return `weekly on ${weekdayName(setting.weekday)} at ${setting.time}`;
}

/** The settings form's three inputs, as the page sends them. */
export const DIGEST_FORM_FIELDS = ["digest_period", "digest_time", "digest_weekday"] as const;

/**
 * A submitted form's digest: undefined when the form had no digest inputs (keep the current one),
 * null for "no digest". A wrong input is named by its field.
 */
export function digestFromForm(form: Record<string, string | undefined>): DigestSetting | null | undefined {
  const period = form.digest_period;
  if (period === undefined) {
    return undefined;
  }
  if (period === "") {
    return null;
  }
  if (period !== "daily" && period !== "weekly") {
    throw invalid("digest_period: must be daily, weekly or empty", [
      { field: "digest_period", message: "must be daily, weekly or empty" },
    ]);
  }
  const time = (form.digest_time ?? "").trim();
  if (!new RegExp(DIGEST_TIME_PATTERN).test(time)) {
    throw invalid("digest_time: must be a time HH:MM", [
      { field: "digest_time", message: "must be a time HH:MM" },
    ]);
  }
  if (period === "daily") {
    return { period, time };
  }
  const weekday = form.digest_weekday ?? "1";
  if (!/^[0-6]$/.test(weekday)) {
    throw invalid("digest_weekday: must be a day 0 (Sunday) to 6", [
      { field: "digest_weekday", message: "must be a day 0 (Sunday) to 6" },
    ]);
  }
  return { period, time, weekday: Number(weekday) };
}
