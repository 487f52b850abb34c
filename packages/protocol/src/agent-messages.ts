/**
 * @module agent-messages
 * Messages the agent sends to the server, and their catalog (wire type -> payload schema).
 */
import { type Static, Type } from "typebox";
import {
  AgentKind,
  CheckStatus,
  Count,
  FinishedJobStatus,
  JobKind,
  LogStreamName,
  NonEmptyString,
  Rfc3339,
  Snapshot,
  TreeChildName,
  TreeEntry,
  Ulid,
  UpdateResultStatus,
} from "./common.js";
import {
  AGENT_DIR_MAX_LENGTH,
  AGENT_DIRS_MAX,
  HOSTNAME_MAX_LENGTH,
  PLATFORM_NAME_MAX_LENGTH,
  SNAPSHOTS_REPORT_MAX_PARTS,
  TIME_ZONE_MAX_LENGTH,
  VERSION_MAX_LENGTH,
} from "./constants.js";
import { DumpChunk, DumpEnd } from "./dump.js";
import { CatalogDelta } from "./file-catalog.js";
import { SNAPSHOT_PATH_PATTERN, TIME_ZONE_PATTERN } from "./formats.js";

/** Every string is bounded (since protocol 5): the server stores them in the host row. */
export const Hello = Type.Object({
  agent_version: Type.String({ minLength: 1, maxLength: VERSION_MAX_LENGTH }),
  /** Empty when the tool was not found: the agent still connects so the operator can see why. */
  tool_version: Type.String({ maxLength: VERSION_MAX_LENGTH }),
  /** Any integer, so that a too-old agent gets `ErrProtocolTooOld` rather than `invalid_message`. */
  protocol_version: Type.Integer(),
  hostname: Type.String({ minLength: 1, maxLength: HOSTNAME_MAX_LENGTH }),
  os: Type.String({ minLength: 1, maxLength: PLATFORM_NAME_MAX_LENGTH }),
  arch: Type.String({ minLength: 1, maxLength: PLATFORM_NAME_MAX_LENGTH }),
  running_job_ids: Type.Array(Ulid),
  /** Since protocol 3; absent means `bundle`. Updates are sent as the same kind of artefact. */
  agent_kind: Type.Optional(AgentKind),
  /**
   * Since protocol 5 (optional, no version change): the IANA zone the agent's scheduler reads its
   * cron expressions in, so the server judges freshness in the same zone. Absent: the server's own.
   */
  time_zone: Type.Optional(Type.String({ maxLength: TIME_ZONE_MAX_LENGTH, pattern: TIME_ZONE_PATTERN })),
  /**
   * Since protocol 12: the agent's own config, state and install directories as paths of its
   * snapshots (as configured and after symlinks), which the server refuses as backup, restore,
   * tree and download paths besides the packaged defaults. Absent: the defaults only.
   */
  agent_dirs: Type.Optional(
    Type.Array(Type.String({ pattern: SNAPSHOT_PATH_PATTERN, maxLength: AGENT_DIR_MAX_LENGTH }), {
      maxItems: AGENT_DIRS_MAX,
    }),
  ),
});
export type Hello = Static<typeof Hello>;

export const Heartbeat = Type.Object({ running_job_ids: Type.Array(Ulid) });
export type Heartbeat = Static<typeof Heartbeat>;

export const ScheduleAck = Type.Object({ version: Type.Integer({ minimum: 0 }) });
export type ScheduleAck = Static<typeof ScheduleAck>;

export const ScheduleFire = Type.Object({ schedule_id: Ulid, scheduled_at: Rfc3339 });
export type ScheduleFire = Static<typeof ScheduleFire>;

export const JobStarted = Type.Object({ job_id: Ulid, kind: JobKind, started_at: Rfc3339 });
export type JobStarted = Static<typeof JobStarted>;

export const JobProgress = Type.Object({
  job_id: Ulid,
  percent_done: Type.Number({ minimum: 0, maximum: 1 }),
  files_done: Count,
  files_total: Type.Optional(Count),
  bytes_done: Count,
  bytes_total: Type.Optional(Count),
  eta_seconds: Type.Optional(Count),
  current_file: Type.Optional(Type.String()),
});
export type JobProgress = Static<typeof JobProgress>;

/** The tool's own summary, kept verbatim: its keys vary between tool versions. */
export const JobSummary = Type.Record(Type.String(), Type.Unknown());
export type JobSummary = Static<typeof JobSummary>;

export const JobFinished = Type.Object({
  job_id: Ulid,
  status: FinishedJobStatus,
  /** null when the tool never ran or was killed by a signal. */
  exit_code: Type.Union([Type.Integer(), Type.Null()]),
  error: Type.Optional(Type.String()),
  summary: Type.Optional(JobSummary),
  /**
   * Since protocol 11: true when the job failed because the repository did not answer (the agent
   * stopped restic after REPOSITORY_UNREACHABLE_MS of failures, or restic gave up on a network
   * error). Absent otherwise.
   */
  repository_unreachable: Type.Optional(Type.Boolean()),
});
export type JobFinished = Static<typeof JobFinished>;

export const LogStream = Type.Object({
  job_id: Ulid,
  stream: LogStreamName,
  line: Type.String(),
  ts: Rfc3339,
});
export type LogStream = Static<typeof LogStream>;

/**
 * The full projection in one frame: the server replaces its cached list, so an empty list is
 * meaningful. The fields it must not carry come first: the compiled check tests properties in this
 * order, so a part (tried against this member first) is refused before its thousand snapshots are
 * validated, not after, and then validated a second time as a part (issue 19, B5).
 */
export const SnapshotsReportWhole = Type.Object({
  report_id: Type.Optional(Type.Never()),
  part: Type.Optional(Type.Never()),
  parts: Type.Optional(Type.Never()),
  snapshots: Type.Array(Snapshot),
  refreshed_at: Rfc3339,
});
export type SnapshotsReportWhole = Static<typeof SnapshotsReportWhole>;

/**
 * Since protocol 2: one frame of a projection too long for one frame. Every part carries the same
 * `report_id`, `parts` and `refreshed_at`; `part` counts from 0, and part 0 holds the most recent
 * snapshots. The server replaces its cached list once every part has arrived, never before.
 */
export const SnapshotsReportPart = Type.Object({
  snapshots: Type.Array(Snapshot),
  refreshed_at: Rfc3339,
  report_id: Ulid,
  part: Type.Integer({ minimum: 0, maximum: SNAPSHOTS_REPORT_MAX_PARTS - 1 }),
  parts: Type.Integer({ minimum: 1, maximum: SNAPSHOTS_REPORT_MAX_PARTS }),
});
export type SnapshotsReportPart = Static<typeof SnapshotsReportPart>;

/** A whole report or one part of it: `report_id`, `part` and `parts` come all together or not at all. */
export const SnapshotsReport = Type.Union([SnapshotsReportWhole, SnapshotsReportPart]);
export type SnapshotsReport = Static<typeof SnapshotsReport>;

export function isSnapshotsReportPart(report: SnapshotsReport): report is SnapshotsReportPart {
  return report.report_id !== undefined;
}

/** A partial update: only the fields present change on the server. */
export const RepoStats = Type.Object({
  last_check_status: Type.Optional(CheckStatus),
  last_check_at: Type.Optional(Rfc3339),
  total_size_bytes: Type.Optional(Count),
  raw_size_bytes: Type.Optional(Count),
  total_file_count: Type.Optional(Count),
  snapshot_count: Type.Optional(Count),
  compression_ratio: Type.Optional(Type.Number({ minimum: 0 })),
  last_prune_at: Type.Optional(Rfc3339),
  last_forget_at: Type.Optional(Rfc3339),
});
export type RepoStats = Static<typeof RepoStats>;

/**
 * Exactly one of `entries` or `error`; the envelope id is the id of the `tree.list` request.
 * Entries are sorted by name. Since protocol 4 a directory with more children than one frame
 * carries is sent in pages: `next_after`, present only when more children follow, is the name of
 * the last entry, to be sent back as `tree.list.after` for the next page.
 */
export const TreeListResult = Type.Union([
  Type.Object({
    entries: Type.Array(TreeEntry),
    next_after: Type.Optional(TreeChildName),
    error: Type.Optional(Type.Never()),
  }),
  Type.Object({
    error: Type.String(),
    entries: Type.Optional(Type.Never()),
    next_after: Type.Optional(Type.Never()),
  }),
]);
export type TreeListResult = Static<typeof TreeListResult>;

/**
 * Since protocol 3: what became of a `command.update` for `version`. `error` says why for
 * `refused` and `rolled_back`; a successful update is confirmed by the next `hello` instead.
 */
export const UpdateResult = Type.Object({
  version: NonEmptyString,
  status: UpdateResultStatus,
  error: Type.Optional(Type.String()),
});
export type UpdateResult = Static<typeof UpdateResult>;

/** Agent -> server. Adding a type here forces every `AgentMessageHandlers` map to handle it. */
export const AgentMessages = {
  hello: Hello,
  heartbeat: Heartbeat,
  "schedule.ack": ScheduleAck,
  "schedule.fire": ScheduleFire,
  "job.started": JobStarted,
  "job.progress": JobProgress,
  "job.finished": JobFinished,
  "log.stream": LogStream,
  "snapshots.report": SnapshotsReport,
  "repo.stats": RepoStats,
  "tree.list.result": TreeListResult,
  "update.result": UpdateResult,
  "dump.chunk": DumpChunk,
  "dump.end": DumpEnd,
  "catalog.delta": CatalogDelta,
} as const;
export type AgentMessages = typeof AgentMessages;
export type AgentMessageType = keyof AgentMessages;
export type AgentPayload<K extends AgentMessageType = AgentMessageType> = Static<AgentMessages[K]>;
