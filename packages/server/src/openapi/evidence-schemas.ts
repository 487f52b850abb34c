/**
 * @module openapi/evidence-schemas
 * The audit evidence report's answer (evidence/evidence-report.ts EvidenceReport).
 */
import { Type } from "typebox";
import { DateTime, Id, NullableDateTime } from "./common-schemas.js";

const Day = Type.String({ description: "a UTC day, YYYY-MM-DD" });
const DayMark = Type.Union([Type.Literal("yes"), Type.Literal("no"), Type.Literal("not yet")], {
  description: "a snapshot of the group was made that day; none was; the group did not exist yet",
});
const ResultMark = Type.Union([Type.Literal("passed"), Type.Literal("failed"), Type.Literal("none")], {
  description: "how the last one by the end of that day ended; none before the first",
});

export const EvidenceReportJson = Type.Object(
  {
    from: Day,
    to: Day,
    days: Type.Array(Day),
    hosts: Type.Array(
      Type.Object({
        host_id: Type.String(),
        name: Type.String(),
        deleted: Type.Boolean({ description: "the host is gone; reported under its last name and labels" }),
        labels: Type.Record(Type.String(), Type.String()),
        groups: Type.Array(
          Type.Object({
            name: Type.String(),
            days: Type.Array(DayMark, { description: "one per day of `days`" }),
            snapshots: Type.Array(Type.Integer({ minimum: 0 }), {
              description: "snapshots first seen, per day",
            }),
            gaps: Type.Array(Type.Object({ from: Day, to: Day, days: Type.Integer({ minimum: 1 }) }), {
              description: "runs of days without a snapshot",
            }),
          }),
        ),
        check: Type.Array(ResultMark),
        drill: Type.Array(ResultMark),
      }),
    ),
    totals: Type.Object({
      hosts: Type.Integer({ minimum: 0 }),
      group_days: Type.Integer({ minimum: 0, description: "days a group existed, over every host" }),
      covered: Type.Integer({ minimum: 0, description: "of those, days with a snapshot" }),
      gaps: Type.Integer({ minimum: 0 }),
    }),
  },
  { $id: "EvidenceReport" },
);

export const ReportScheduleJson = Type.Object(
  {
    id: Id,
    name: Type.String(),
    channel_id: Type.String({ description: "the email channel whose SMTP server sends it" }),
    recipients: Type.Array(Type.String()),
    period: Type.Union([Type.Literal("weekly"), Type.Literal("monthly")]),
    time: Type.String({ description: "local time HH:MM (FLEETBACK_TZ)" }),
    weekday: Type.Union([Type.Integer({ minimum: 0, maximum: 6 }), Type.Null()], {
      description: "weekly: 0 = Sunday; null for monthly (sent on the 1st)",
    }),
    selector: Type.String(),
    groups: Type.String(),
    enabled: Type.Boolean(),
    when: Type.String({ description: "in words, e.g. weekly on Monday at 08:00" }),
    last_queued_at: NullableDateTime,
    created_at: DateTime,
    updated_at: DateTime,
  },
  { $id: "ReportSchedule" },
);
export const ReportScheduleAnswer = Type.Object({ report_schedule: ReportScheduleJson });
export const ReportScheduleList = Type.Object({ report_schedules: Type.Array(ReportScheduleJson) });
