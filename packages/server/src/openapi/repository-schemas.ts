/**
 * @module openapi/repository-schemas
 * Answers about a host's repository: its cached snapshots (snapshots/snapshot-store.ts
 * snapshotJson), a folder of a snapshot's tree, a started restore, the maintenance cadences
 * (maintenance/maintenance-record.ts maintenanceJson) and the repository stats
 * (maintenance/repo-stats.ts repoStatsJson).
 */
import { CHECK_STATUSES } from "@fleetback/db";
import { TreeEntry } from "@fleetback/protocol";
import { Type } from "typebox";
import {
  DateTime,
  Enum,
  Id,
  Nullable,
  NullableDateTime,
  NullableInteger,
  NullableNumber,
} from "./common-schemas.js";
import { LastDrill } from "./host-schemas.js";

export const Snapshot = Type.Object(
  {
    id: Type.String({ description: "restic's full snapshot id" }),
    short_id: Type.String(),
    time: DateTime,
    hostname: Type.String(),
    paths: Type.Array(Type.String()),
    tags: Type.Array(Type.String()),
    size_bytes: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
      description: "null: restic before 0.17 does not report it (unknown, not 0)",
    }),
    file_count: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
      description: "null: restic before 0.17 does not report it (unknown, not 0)",
    }),
    own: Type.Boolean({
      description:
        "false: another machine's snapshot in a shared repository, which this host's retention never forgets",
    }),
  },
  { $id: "Snapshot" },
);

export const SnapshotPage = Type.Object({
  snapshots: Type.Array(Snapshot),
  refreshed_at: Type.Union([DateTime, Type.Null()], { description: "when the agent last reported them" }),
  total: Type.Integer({ minimum: 0 }),
  next_before: Type.Optional(
    Type.String({ description: "present when the page is full: pass it as `before` for the next page" }),
  ),
});

export const TreeFolder = Type.Object({
  path: Type.String(),
  entries: Type.Array(TreeEntry),
  cached: Type.Boolean({ description: "served from this session's cache, not asked of the agent" }),
  next_after: Type.Optional(
    Type.String({ description: "present when the folder has more: pass it as `after` for the next page" }),
  ),
});

export const RecoveryStarted = Type.Object({
  started: Type.Array(Type.Object({ group: Type.String(), snapshot_id: Type.String(), job_id: Id }), {
    description: "one restore job per group, from the newest of the host's own snapshots of it",
  }),
  skipped: Type.Array(Type.Object({ group: Type.String(), reason: Type.String() }), {
    description: "groups with no snapshot to restore (or whose restore the host went offline before)",
  }),
});

export const RestoreStarted = Type.Object({
  job_id: Id,
  target_dir: Type.String({ description: "where the files go, with the job id filled in" }),
});

const nextAt = (kind: string) =>
  Type.Union([DateTime, Type.Null()], { description: `the next ${kind} slot; null when disabled` });

export const Maintenance = Type.Object(
  {
    host_id: Id,
    time_zone: Type.String(),
    forget_cron: Type.String(),
    forget_enabled: Type.Boolean(),
    prune_cron: Type.String(),
    prune_enabled: Type.Boolean(),
    check_cron: Type.String(),
    check_enabled: Type.Boolean(),
    check_read_data_subset: Type.String(),
    drill_cron: Type.String(),
    drill_enabled: Type.Boolean(),
    drill_sample_files: Type.Integer(),
    next_forget_at: nextAt("forget"),
    next_prune_at: nextAt("prune"),
    next_check_at: nextAt("check"),
    next_drill_at: nextAt("drill"),
    updated_at: DateTime,
  },
  { $id: "Maintenance" },
);

export const MaintenanceWithDrill = Type.Object({
  maintenance: Maintenance,
  last_drill: Nullable(LastDrill),
});
export const MaintenanceAnswer = Type.Object({ maintenance: Maintenance });

export const RepoStats = Type.Object(
  {
    last_check_status: Nullable(Enum(CHECK_STATUSES)),
    last_check_at: NullableDateTime,
    last_check_ok_at: NullableDateTime,
    stored_size_bytes: NullableInteger,
    uncompressed_size_bytes: Type.Union([Type.Integer(), Type.Null()], {
      description: "null for restic 0.14, which does not report it",
    }),
    total_size_bytes: Type.Union([Type.Integer(), Type.Null()], {
      description: "deprecated alias of uncompressed_size_bytes",
      deprecated: true,
    }),
    raw_size_bytes: Type.Union([Type.Integer(), Type.Null()], {
      description: "deprecated alias of stored_size_bytes",
      deprecated: true,
    }),
    total_file_count: NullableInteger,
    snapshot_count: NullableInteger,
    compression_ratio: NullableNumber,
    last_prune_at: NullableDateTime,
    last_forget_at: NullableDateTime,
    updated_at: NullableDateTime,
  },
  { $id: "RepoStats" },
);

export const RepoStatsAnswer = Type.Object({ stats: RepoStats });
