/**
 * @module reports/report-schedules
 * Scheduled evidence reports (issue 39.3): the report for the last week or month, mailed at a
 * local time through an email channel's SMTP settings to a list of addresses of its own. The
 * selector is checked when saved, so a stored schedule always names a valid one. A schedule set
 * or changed counts its slots from then, as a digest does.
 */
import {
  type Database,
  notificationChannels,
  REPORT_PERIODS,
  type ReportPeriod,
  type ReportSchedule,
  reportSchedules,
} from "@fleetback/db";
import { asc, eq } from "drizzle-orm";
import { type Static, Type } from "typebox";
import { type AuditContext, writeAudit } from "../audit/audit.js";
import { type Clock, utcDay } from "../clock.js";
import { invalid, notFound } from "../errors.js";
import type { Ids } from "../ids.js";
import { selectorFromRequest } from "../labels/selector.js";
import { DIGEST_TIME_PATTERN, localTimeCron, weekdayName } from "../notifications/digest-schedule.js";
import { withUniqueName } from "../unique-name.js";

export { REPORT_PERIODS, type ReportPeriod };

const NAME_CONSTRAINT = "report_schedules_name_key";
const Recipient = Type.String({ format: "email", maxLength: 320 });

const fields = {
  name: Type.String({ minLength: 1, maxLength: 100, pattern: "\\S" }),
  channel_id: Type.String({
    minLength: 1,
    maxLength: 64,
    description: "an email channel: its SMTP server sends",
  }),
  recipients: Type.Array(Recipient, { minItems: 1, maxItems: 20 }),
  period: Type.Union([Type.Literal("weekly"), Type.Literal("monthly")], {
    description: "weekly: the 7 UTC days before the sending day; monthly (on the 1st): the previous month",
  }),
  time: Type.String({ pattern: DIGEST_TIME_PATTERN, description: "local time HH:MM (FLEETBACK_TZ)" }),
  weekday: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 6, description: "weekly only: 0 = Sunday; default Monday" }),
  ),
  selector: Type.Optional(
    Type.String({ maxLength: 4096, description: "a label selector; empty: every host" }),
  ),
  groups: Type.Optional(
    Type.String({ maxLength: 2048, description: "group names, comma-separated; empty: all" }),
  ),
  enabled: Type.Optional(Type.Boolean()),
};

export const NewReportScheduleBody = Type.Object(fields, { additionalProperties: false });
export type NewReportScheduleBody = Static<typeof NewReportScheduleBody>;

export const ReportScheduleChange = Type.Object(
  {
    name: Type.Optional(fields.name),
    channel_id: Type.Optional(fields.channel_id),
    recipients: Type.Optional(fields.recipients),
    period: Type.Optional(fields.period),
    time: Type.Optional(fields.time),
    weekday: Type.Optional(Type.Union([fields.weekday, Type.Null()])),
    selector: Type.Optional(fields.selector),
    groups: Type.Optional(fields.groups),
    enabled: Type.Optional(fields.enabled),
  },
  { additionalProperties: false },
);
export type ReportScheduleChange = Static<typeof ReportScheduleChange>;

export interface ReportStoreDeps {
  db: Database;
  clock: Clock;
  ids: Ids;
}

function field(name: string, message: string) {
  return invalid(`${name}: ${message}`, [{ field: name, message }]);
}

async function checkChannel(db: Database, channelId: string): Promise<void> {
  const [channel] = await db
    .select({ kind: notificationChannels.kind })
    .from(notificationChannels)
    .where(eq(notificationChannels.id, channelId));
  if (!channel) {
    throw field("channel_id", "no such notification channel");
  }
  if (channel.kind !== "email") {
    throw field("channel_id", "must be an email channel");
  }
}

/** The weekday column: a weekly schedule's day (Monday when not given), none for monthly. */
function weekdayOf(period: ReportPeriod, weekday: number | null | undefined): number | null {
  if (period === "monthly") {
    if (weekday !== undefined && weekday !== null) {
      throw field("weekday", "only a weekly report has a weekday");
    }
    return null;
  }
  return weekday ?? 1;
}

function cleanGroups(groups: string | undefined): string {
  return (groups ?? "")
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name.length > 0)
    .join(",");
}

function audited(
  db: Database,
  deps: ReportStoreDeps,
  audit: AuditContext,
  action: string,
  id: string,
  details: Record<string, unknown>,
) {
  return writeAudit(db, deps, { ...audit, action, targetKind: "report_schedule", targetId: id, details });
}

export async function createReportSchedule(
  deps: ReportStoreDeps,
  audit: AuditContext,
  body: NewReportScheduleBody,
): Promise<ReportSchedule> {
  const selector = (body.selector ?? "").trim();
  selectorFromRequest(selector, "selector");
  await checkChannel(deps.db, body.channel_id);
  const now = deps.clock.now();
  const id = deps.ids.ulid(now);
  const values = {
    id,
    name: body.name.trim(),
    channelId: body.channel_id,
    recipients: body.recipients,
    period: body.period,
    time: body.time,
    weekday: weekdayOf(body.period, body.weekday),
    selector,
    groups: cleanGroups(body.groups),
    enabled: body.enabled ?? true,
    slotAt: now,
    createdAt: now,
    updatedAt: now,
  };
  return withUniqueName(NAME_CONSTRAINT, "a report schedule", values.name, () =>
    deps.db.transaction(async (tx) => {
      const [row] = await tx.insert(reportSchedules).values(values).returning();
      if (!row) {
        throw new Error("insert into report_schedules returned no row");
      }
      await audited(tx, deps, audit, "report_schedule.create", id, {
        name: row.name,
        when: describeReportSchedule(row),
        recipients: row.recipients.length,
      });
      return row;
    }),
  );
}

export async function getReportSchedule(db: Database, id: string): Promise<ReportSchedule> {
  const [row] = await db.select().from(reportSchedules).where(eq(reportSchedules.id, id));
  if (!row) {
    throw notFound(`No report schedule ${id}.`);
  }
  return row;
}

export function listReportSchedules(db: Database): Promise<ReportSchedule[]> {
  return db.select().from(reportSchedules).orderBy(asc(reportSchedules.name));
}

export async function updateReportSchedule(
  deps: ReportStoreDeps,
  audit: AuditContext,
  id: string,
  change: ReportScheduleChange,
): Promise<ReportSchedule> {
  const current = await getReportSchedule(deps.db, id);
  const period = change.period ?? current.period;
  // A weekly schedule keeps its day unless told another; a monthly one has none.
  const weekday = weekdayOf(
    period,
    change.weekday !== undefined || period === "monthly" ? change.weekday : current.weekday,
  );
  if (change.selector !== undefined) {
    selectorFromRequest(change.selector.trim(), "selector");
  }
  if (change.channel_id !== undefined) {
    await checkChannel(deps.db, change.channel_id);
  }
  const now = deps.clock.now();
  const next = {
    name: change.name?.trim() ?? current.name,
    channelId: change.channel_id ?? current.channelId,
    recipients: change.recipients ?? current.recipients,
    period,
    time: change.time ?? current.time,
    weekday,
    selector: change.selector?.trim() ?? current.selector,
    groups: change.groups === undefined ? current.groups : cleanGroups(change.groups),
    enabled: change.enabled ?? current.enabled,
    updatedAt: now,
  };
  const moved =
    next.period !== current.period || next.time !== current.time || next.weekday !== current.weekday;
  return withUniqueName(NAME_CONSTRAINT, "a report schedule", next.name, () =>
    deps.db.transaction(async (tx) => {
      const [row] = await tx
        .update(reportSchedules)
        .set({ ...next, ...(moved ? { slotAt: now } : {}) })
        .where(eq(reportSchedules.id, id))
        .returning();
      if (!row) {
        throw notFound(`No report schedule ${id}.`);
      }
      await audited(tx, deps, audit, "report_schedule.update", id, {
        fields: Object.keys(change),
        when: describeReportSchedule(row),
      });
      return row;
    }),
  );
}

export async function deleteReportSchedule(
  deps: ReportStoreDeps,
  audit: AuditContext,
  id: string,
): Promise<void> {
  await deps.db.transaction(async (tx) => {
    const [row] = await tx.delete(reportSchedules).where(eq(reportSchedules.id, id)).returning();
    if (!row) {
      throw notFound(`No report schedule ${id}.`);
    }
    await audited(tx, deps, audit, "report_schedule.delete", id, { name: row.name });
  });
}

export function reportCron(row: Pick<ReportSchedule, "period" | "time" | "weekday">): string {
  return localTimeCron(row.time, row.period === "weekly" ? { weekday: row.weekday ?? 1 } : { monthDay: 1 });
}

/** "weekly on Monday at 08:00", "monthly on the 1st at 08:00". */
export function describeReportSchedule(row: Pick<ReportSchedule, "period" | "time" | "weekday">): string {
  if (row.period === "monthly") {
    return `monthly on the 1st at ${row.time}`;
  }
  return `weekly on ${weekdayName(row.weekday)} at ${row.time}`;
}

const DAY_MS = 86_400_000;

/**
 * The UTC days a report sent at `slot` covers: weekly, the seven days before the slot's UTC day;
 * monthly, the calendar month before the slot's.
 */
export function reportRange(period: ReportPeriod, slot: Date): { from: string; to: string } {
  const today = new Date(`${utcDay(slot)}T00:00:00Z`);
  if (period === "weekly") {
    return {
      from: utcDay(new Date(today.getTime() - 7 * DAY_MS)),
      to: utcDay(new Date(today.getTime() - DAY_MS)),
    };
  }
  const firstOfThisMonth = Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), 1);
  const firstOfLast = Date.UTC(today.getUTCFullYear(), today.getUTCMonth() - 1, 1);
  return { from: utcDay(new Date(firstOfLast)), to: utcDay(new Date(firstOfThisMonth - DAY_MS)) };
}

/** The API's view of a schedule. */
export function reportScheduleJson(row: ReportSchedule) {
  return {
    id: row.id,
    name: row.name,
    channel_id: row.channelId,
    recipients: row.recipients,
    period: row.period,
    time: row.time,
    weekday: row.weekday,
    selector: row.selector,
    groups: row.groups,
    enabled: row.enabled,
    when: describeReportSchedule(row),
    last_queued_at: row.queuedAt,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}
export type ReportScheduleJson = ReturnType<typeof reportScheduleJson>;
