/**
 * @module openapi/alert-schemas
 * Answers about alerts (alerts/alerts.ts alertJson) and the dashboard that counts them with
 * everything else (dashboard/dashboard-view.ts dashboardJson).
 */
import { Type } from "typebox";
import { DateTime, Enum, Id, Nullable, NullableDateTime, NullableString } from "./common-schemas.js";
import { FreshnessState } from "./host-schemas.js";
import { NextBefore } from "./job-schemas.js";

export const Alert = Type.Object(
  {
    id: Id,
    host_id: Id,
    host_name: Type.String(),
    group_name: Type.Union([Type.String(), Type.Null()], {
      description: "the source group of a backup_failed",
    }),
    kind: Type.String({
      description: "`<job kind>_failed`, a health kind (overdue, ...) or agent_update_failed",
    }),
    dedup_key: Type.String({ description: "the source group id for backup_failed; empty otherwise" }),
    message: Type.String(),
    last_job_id: NullableString,
    created_at: DateTime,
    last_seen_at: DateTime,
    resolved_at: NullableDateTime,
    resolved_by: Type.Union([Type.String(), Type.Null()], {
      description: "the user who resolved it; null when a good job did",
    }),
    state: Enum(["open", "resolved"]),
  },
  { $id: "Alert" },
);

export const AlertPage = Type.Object({ alerts: Type.Array(Alert), next_before: NextBefore });

export const AlertResolved = Type.Object({
  alert: Type.Object({ id: Id, resolved_at: NullableDateTime, resolved_by: NullableString }),
});

const Count = Type.Integer({ minimum: 0 });

export const Dashboard = Type.Object(
  {
    generated_at: DateTime,
    hosts: Type.Object(
      { total: Count, online: Count, offline: Count, overdue: Count, failing: Count, unprotected: Count },
      {
        description:
          "hosts by state; a host may be in more than one. unprotected: no repository, no group, a group no schedule fires or one never backed up",
      },
    ),
    deletion_protection: Type.Object(
      { hosts: Count, protected: Count, unprotected: Count, held: Count },
      {
        description:
          "protected: a keeper maintains the repository and the host holds no delete-capable credential; unprotected: whoever controls the host can delete its backups; held: hosts with an open deletion hold",
      },
    ),
    groups: Type.Object({ fresh: Count, due: Count, overdue: Count, never: Count, unscheduled: Count }),
    unprotected: Type.Object(
      { no_repository: Count, no_group: Count, unscheduled: Count, never: Count },
      { description: "unprotected hosts by their worst reason; they add up to hosts.unprotected" },
    ),
    attention: Type.Array(
      Type.Object({
        host_id: Id,
        host_name: Type.String(),
        group_id: Id,
        group_name: Type.String(),
        state: FreshnessState,
        last_snapshot_at: NullableDateTime,
        last_snapshot_age_seconds: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
        next_fire_at: NullableDateTime,
        due_at: NullableDateTime,
        deadline: NullableDateTime,
        overdue_seconds: Type.Integer({ minimum: 0 }),
        time_zone: Type.String(),
      }),
      { description: "overdue groups (oldest last snapshot first), then due ones; at most 20" },
    ),
    attention_total: Type.Integer({ minimum: 0 }),
    jobs_24h: Type.Object({
      from: DateTime,
      to: DateTime,
      hosts_shown: Type.Integer({ minimum: 0 }),
      by_status: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), {
        description: "jobs of the last 24 h by status; a status with none is absent",
      }),
    }),
    repository: Type.Object({
      stored_bytes: Type.Integer({ minimum: 0 }),
      hosts_reporting: Type.Integer({ minimum: 0 }),
      daily: Type.Array(
        Type.Object({
          day: Type.String({ format: "date" }),
          // A day before the first report has no figure; 0 would read as an empty fleet.
          stored_bytes: Nullable(Type.Integer({ minimum: 0 })),
        }),
      ),
    }),
    open_alerts: Type.Integer({ minimum: 0 }),
    newest_alerts: Type.Array(Alert),
  },
  { $id: "Dashboard" },
);
