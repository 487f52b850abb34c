/**
 * @module common
 * Schemas shared by several messages. Schema and type share one name; `description` doubles as
 * the wording of validation errors ("expected ULID"), so keep it short and in the reader's terms.
 */
import { type Static, Type } from "typebox";
import {
  AGENT_KINDS,
  CHECK_STATUSES,
  COPY_SNAPSHOTS_MAX,
  CREDENTIAL_SLOTS,
  DRILL_MAX_SAMPLE_FILES,
  FINISHED_JOB_STATUSES,
  JOB_KINDS,
  LOG_STREAMS,
  TREE_CHILD_NAME_MAX_LENGTH,
  TREE_ENTRY_TYPES,
  UPDATE_RESULT_STATUSES,
} from "./constants.js";
import {
  READ_DATA_SUBSET_PATTERN,
  RESTIC_DURATION_PATTERN,
  RESTORE_TARGET_PATTERN,
  RFC3339_UTC_PATTERN,
  SHA256_HEX_PATTERN,
  SNAPSHOT_ID_PATTERN,
  SNAPSHOT_PATH_PATTERN,
  TREE_CHILD_NAME_PATTERN,
  ULID_PATTERN,
} from "./formats.js";
import { RestoreOrder } from "./restore-order.js";

export const Ulid = Type.String({ pattern: ULID_PATTERN, description: "ULID" });
export type Ulid = Static<typeof Ulid>;

export const Rfc3339 = Type.String({ pattern: RFC3339_UTC_PATTERN, description: "RFC 3339 UTC timestamp" });
export type Rfc3339 = Static<typeof Rfc3339>;

/** Sizes and counts: bytes, files, snapshots. */
export const Count = Type.Integer({ minimum: 0 });
export type Count = Static<typeof Count>;

export const NonEmptyString = Type.String({ minLength: 1 });

/** KiB/s; 0 is not "no cap" in every tool, so the contract spells "no cap" as null or omission. */
export const Kbps = Type.Integer({ minimum: 1 });
export type Kbps = Static<typeof Kbps>;

export const ResticDuration = Type.String({
  pattern: RESTIC_DURATION_PATTERN,
  description: "restic duration such as 30d or 1y6m",
});
export type ResticDuration = Static<typeof ResticDuration>;

export const SnapshotId = Type.String({ pattern: SNAPSHOT_ID_PATTERN, description: "hex snapshot id" });
export type SnapshotId = Static<typeof SnapshotId>;

export const SnapshotPath = Type.String({ pattern: SNAPSHOT_PATH_PATTERN, description: "absolute path" });
export type SnapshotPath = Static<typeof SnapshotPath>;

export const JobKind = Type.Enum(JOB_KINDS);
export type JobKind = Static<typeof JobKind>;

export const FinishedJobStatus = Type.Enum(FINISHED_JOB_STATUSES);
export type FinishedJobStatus = Static<typeof FinishedJobStatus>;

export const CredentialSlot = Type.Enum(CREDENTIAL_SLOTS);
export type CredentialSlot = Static<typeof CredentialSlot>;

export const LogStreamName = Type.Enum(LOG_STREAMS);
export type LogStreamName = Static<typeof LogStreamName>;

export const TreeEntryType = Type.Enum(TREE_ENTRY_TYPES);
export type TreeEntryType = Static<typeof TreeEntryType>;

export const CheckStatus = Type.Enum(CHECK_STATUSES);
export type CheckStatus = Static<typeof CheckStatus>;

/** One snapshot of `snapshots.report`; size and count are 0 for tools before 0.16 (no summary). */
export const Snapshot = Type.Object({
  id: SnapshotId,
  short_id: SnapshotId,
  time: Rfc3339,
  hostname: Type.String(),
  paths: Type.Array(Type.String()),
  tags: Type.Array(Type.String()),
  size_bytes: Count,
  file_count: Count,
});
export type Snapshot = Static<typeof Snapshot>;

/**
 * The name of one child of a directory, as a paging cursor: a name, never a path, so it holds no
 * `/` and no NUL. Its length is bounded by what a frame can carry, not by a file system.
 */
export const TreeChildName = Type.String({
  pattern: TREE_CHILD_NAME_PATTERN,
  minLength: 1,
  maxLength: TREE_CHILD_NAME_MAX_LENGTH,
  description: "a child name without / or NUL",
});
export type TreeChildName = Static<typeof TreeChildName>;

/** One direct child of the listed path in `tree.list.result`. */
export const TreeEntry = Type.Object({
  name: Type.String(),
  path: SnapshotPath,
  type: TreeEntryType,
  size: Count,
  mtime: Rfc3339,
});
export type TreeEntry = Static<typeof TreeEntry>;

/**
 * Credentials of one slot; the login is merged into the URL only when the tool is spawned.
 * `password` opens the repository (RESTIC_PASSWORD). `login_password` (protocol 11) is the
 * repository server's login of `username` (rest-server's htpasswd); absent, `password` is used
 * for both, as agents before 11 always do.
 */
export const Repository = Type.Object({
  url: NonEmptyString,
  username: Type.Optional(Type.String()),
  password: NonEmptyString,
  login_password: Type.Optional(NonEmptyString),
});
export type Repository = Static<typeof Repository>;

/** Host-wide caps. Both are required and null is "no cap", so clearing a cap is pushed, never left stale. */
export const Caps = Type.Object({
  bandwidth_up_kbps: Type.Union([Kbps, Type.Null()]),
  bandwidth_down_kbps: Type.Union([Kbps, Type.Null()]),
});
export type Caps = Static<typeof Caps>;

/**
 * A retention policy. An empty object is valid on the wire on purpose: the agent must see it to
 * refuse the job (an empty policy would delete every snapshot), instead of the frame being dropped.
 */
export const Keep = Type.Object({
  last: Type.Optional(Type.Integer({ minimum: 1 })),
  hourly: Type.Optional(Type.Integer({ minimum: 1 })),
  daily: Type.Optional(Type.Integer({ minimum: 1 })),
  weekly: Type.Optional(Type.Integer({ minimum: 1 })),
  monthly: Type.Optional(Type.Integer({ minimum: 1 })),
  yearly: Type.Optional(Type.Integer({ minimum: 1 })),
  within: Type.Optional(ResticDuration),
  within_hourly: Type.Optional(ResticDuration),
  within_daily: Type.Optional(ResticDuration),
  within_weekly: Type.Optional(ResticDuration),
  within_monthly: Type.Optional(ResticDuration),
  within_yearly: Type.Optional(ResticDuration),
});
export type Keep = Static<typeof Keep>;

/** One source group of a forget job: forget runs restricted to this tag. */
export const ForgetGroup = Type.Object({ tag: NonEmptyString, keep: Keep });
export type ForgetGroup = Static<typeof ForgetGroup>;

export const Check = Type.Object({
  read_data_subset: Type.Optional(
    Type.String({ pattern: READ_DATA_SUBSET_PATTERN, description: "n/t, x% or a size such as 500M" }),
  ),
});
export type Check = Static<typeof Check>;

export const Restore = Type.Object({
  snapshot_id: SnapshotId,
  paths: Type.Array(SnapshotPath, { minItems: 1 }),
  in_place: Type.Boolean(),
  target_dir: Type.String({
    pattern: RESTORE_TARGET_PATTERN,
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the shell variable form, not a template
    description: "absolute path or one starting with $HOME, ${HOME} or ~/",
  }),
  /**
   * Protocol 13: the server's signed order for this restore (restore-order.ts), which the agent
   * hands to its restore helper unchanged.
   */
  order: Type.Optional(RestoreOrder),
});
export type Restore = Static<typeof Restore>;

export const Diff = Type.Object({ snapshot_a: SnapshotId, snapshot_b: SnapshotId });
export type Diff = Static<typeof Diff>;

/** A restore drill (since protocol 6): restore a random sample of the snapshot's files and verify them. */
export const Drill = Type.Object({
  snapshot_id: SnapshotId,
  sample_files: Type.Integer({ minimum: 1, maximum: DRILL_MAX_SAMPLE_FILES }),
});
export type Drill = Static<typeof Drill>;

/** `command.run` kind `copy` (protocol 8): snapshots of the `repo` slot to copy to the `mirror` slot. */
export const Copy = Type.Object({
  snapshot_ids: Type.Array(Type.String({ pattern: SHA256_HEX_PATTERN, description: "full snapshot id" }), {
    minItems: 1,
    maxItems: COPY_SNAPSHOTS_MAX,
  }),
});
export type Copy = Static<typeof Copy>;

/** One entry of `schedule.set`; `cron` is not checked here because the agent skips bad ones. */
export const ScheduleEntry = Type.Object({
  id: Ulid,
  cron: Type.String(),
  enabled: Type.Boolean(),
  source_groups: Type.Array(Ulid),
});
export type ScheduleEntry = Static<typeof ScheduleEntry>;

export const AgentKind = Type.Enum(AGENT_KINDS);
export type AgentKind = Static<typeof AgentKind>;

export const UpdateResultStatus = Type.Enum(UPDATE_RESULT_STATUSES);
export type UpdateResultStatus = Static<typeof UpdateResultStatus>;
