/**
 * @module openapi/source-schemas
 * Answers about what a host backs up and when: source groups (sources/source-groups.ts
 * groupJson) with their freshness (freshness/freshness.ts freshnessJson), host default hooks, run-now,
 * and schedules (sources/schedules.ts scheduleJson plus their timing and versions).
 */
import { Type } from "typebox";
import { RetentionPolicyBody } from "../sources/source-group-schema.js";
import { DateTime, Id, Nullable, NullableDateTime, NullableInteger } from "./common-schemas.js";
import { FreshnessState } from "./host-schemas.js";

export const Freshness = Type.Object(
  {
    host_id: Id,
    host_name: Type.String(),
    source_group_id: Id,
    source_group_name: Type.String(),
    state: FreshnessState,
    last_snapshot_at: NullableDateTime,
    due_at: NullableDateTime,
    deadline: Type.Union([DateTime, Type.Null()], { description: "overdue from this instant on" }),
    next_fire_at: NullableDateTime,
    overdue_seconds: Type.Integer({ minimum: 0 }),
    time_zone: Type.String(),
  },
  { $id: "Freshness" },
);

export const SourceGroup = Type.Object(
  {
    id: Id,
    host_id: Id,
    name: Type.String({ description: "also the snapshots' tag" }),
    includes: Type.Array(Type.String()),
    excludes: Type.Array(Type.String()),
    retention_policy: RetentionPolicyBody,
    retry_max: Type.Integer(),
    retry_backoff_seconds: Type.Integer(),
    grace_seconds: NullableInteger,
    bandwidth_up_kbps: NullableInteger,
    bandwidth_down_kbps: NullableInteger,
    conflict_dimension: Type.Union([Type.String(), Type.Null()], {
      description: "the first include path another group of the host also covers",
    }),
    has_pre_hook: Type.Boolean(),
    has_post_hook: Type.Boolean(),
    created_at: DateTime,
    updated_at: DateTime,
    pre_hook: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: "admins only" })),
    post_hook: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: "admins only" })),
  },
  { $id: "SourceGroup" },
);

export const SourceGroupList = Type.Object({
  source_groups: Type.Array(Type.Object({ ...SourceGroup.properties, freshness: Nullable(Freshness) })),
});

export const SourceGroupAnswer = Type.Object({ source_group: SourceGroup });

export const RunNowStarted = Type.Object({ job_id: Id });
export const RunNowQueued = Type.Object({
  pending_run_id: Type.String({ description: "the host is offline: the run waits for it" }),
});

export const HostHooksAnswer = Type.Object({
  has_pre_hook_default: Type.Boolean(),
  has_post_hook_default: Type.Boolean(),
});

const versions = {
  schedule_version: Type.Integer({ description: "bumped by every schedule change of the host" }),
  schedule_acked_version: Type.Integer({ description: "the version the agent last applied" }),
};

export const ScheduleVersions = Type.Object(versions);

export const Schedule = Type.Object(
  {
    id: Id,
    host_id: Id,
    cron: Type.String(),
    enabled: Type.Boolean(),
    source_group_ids: Type.Array(Id),
    created_at: DateTime,
    updated_at: DateTime,
    description: Type.Union([Type.String(), Type.Null()], {
      description: "the cron expression in English; null for an uncommon shape",
    }),
    next_runs: Type.Array(DateTime, { description: "the next three fires; none when disabled" }),
    time_zone: Type.String({ description: "the IANA zone the expression is read in" }),
  },
  { $id: "Schedule" },
);

export const ScheduleList = Type.Object({ schedules: Type.Array(Schedule), ...versions });

export const ScheduleAnswer = Type.Object({
  schedule: Schedule,
  pushed: Type.Boolean({ description: "schedule.set was sent to the connected agent" }),
  ...versions,
});
