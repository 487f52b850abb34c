/**
 * @module constants
 * Fixed values of the wire contract (this package's PROTOCOL.md, "Constants"). Literals here never
 * change once released: a change is a new PROTOCOL_VERSION and a CHANGELOG entry.
 */

/**
 * The version this package speaks, sent by the agent in `hello`. 2: `snapshots.report` in parts.
 * 3: `update.result` and `hello.agent_kind` (self-update). 4: `tree.list` in pages (`after`,
 * `next_after`). 5: the strings of `hello` are bounded. 6: the `drill` job kind (restore drills). 7: operator tools (issue 17): file download with
 * `restic dump` and forgetting single snapshots. 8: the `copy` job kind and the `mirror`
 * credential slot (a second copy of every snapshot in another repository). 9: a backup's
 * `repo.stats` comes after its `job.finished` (the job's time is restic's). 10: so does its
 * `snapshots.report`. 11: snapshot ownership in a shared repository (a backup's `host`, a
 * forget's `hosts`) and a repository server login apart from the repository password. 12: a keeper
 * (credentials for one job, `command.run.kept`), so protected hosts never hold delete authority,
 * and the agent names its own directories (`hello.agent_dirs`) and leaves them out of every
 * backup, restore, tree listing and download. 13: a restore carries the server's signed order
 * (`restore.order`), the only thing the host's restore helper runs. 14: a restore may be `kept`
 * (a snapshot of another host's repository, read with credentials pushed for that job alone).
 * 15: after a backup the agent sends what changed in the group's files (`catalog.delta`) and the
 * server answers `catalog.ack`: the fleet's file catalogue that search reads (issue 38).
 */
export const PROTOCOL_VERSION = 15;

/** `hello.time_zone`: IANA names are far shorter (the longest is 32 characters). */
export const TIME_ZONE_MAX_LENGTH = 64;

/** The first protocol whose agents answer `tree.list.after`; older ones ignore it and send page one again. */
export const TREE_PAGING_PROTOCOL_VERSION = 4;

/** The first protocol whose agents run `command.run` kind `drill`; an older agent refuses the frame. */
export const DRILL_PROTOCOL_VERSION = 6;

/**
 * The first protocol whose agents run `command.run` kind `forget` with `snapshot_ids` (forget
 * exactly those snapshots, no policy); the server never sends one to an older agent.
 */
export const FORGET_SNAPSHOTS_PROTOCOL_VERSION = 7;

/**
 * The first protocol whose agents take the `mirror` credential slot and run `command.run` kind
 * `copy`; an older agent refuses both frames, so the server sends neither to it.
 */
export const MIRROR_PROTOCOL_VERSION = 8;

/**
 * The first protocol whose agents back up under `command.run.host` (restic `--host`), restrict a
 * policy forget to `command.run.hosts`, and log in to the repository server with
 * `repository.login_password`. The server sends a policy forget to an older agent only while the
 * repository holds no other machine's snapshots, and a separate login password not at all.
 */
export const SNAPSHOT_OWNER_PROTOCOL_VERSION = 11;

/**
 * The first protocol whose agents can keep other hosts' repositories: they hold a `config.update`
 * carrying `job_id` for that one job (never as their own slot) and run a `command.run` with
 * `kept` on it. An older agent would store the credentials as its own, so the server designates
 * no older agent as a keeper and sends neither frame to one.
 */
export const KEEPER_PROTOCOL_VERSION = 12;

/** Most job-scoped credential sets an agent holds at once; the oldest goes first past it. */
export const JOB_CREDENTIALS_MAX = 32;

/**
 * Most hostnames a policy forget may name (`command.run.hosts`): the host's stable name and the
 * names it reported before; the server keeps that many at most.
 */
export const FORGET_HOSTS_MAX = 16;

/**
 * The first protocol whose agents leave their own config, state and install directories out of
 * backups, restores, tree listings and downloads. The server refuses to restore or download a
 * folder that holds one of them from an older agent, which would hand over the agent's token.
 */
export const AGENT_DIRS_PROTOCOL_VERSION = 12;

/**
 * The first protocol whose agents hand `restore.order` to the restore helper. An older agent
 * ignores the field, and a helper installed for this version refuses its restores: re-running
 * the installer brings both up to date.
 */
export const RESTORE_ORDER_PROTOCOL_VERSION = 13;

/**
 * The first protocol whose agents run a `command.run` kind `restore` with `kept`: a snapshot of
 * another host restored here, from that host's repository, with the `repo` credential pushed for
 * this job alone (`config.update.job_id`). An older agent refuses a kept restore on arrival, so the
 * server sends it to none.
 */
export const CROSS_HOST_RESTORE_PROTOCOL_VERSION = 14;

/**
 * The first protocol whose agents send `catalog.delta` after a backup. The server needs no
 * version check: it answers whatever arrives, and an older agent sends nothing.
 */
export const CATALOG_PROTOCOL_VERSION = 15;

/** Most parts of one `catalog.delta`: ~10 million entries at the frame size. */
export const CATALOG_DELTA_MAX_PARTS = 4096;

/** Most entries of `catalog.delta.changed` plus `catalog.delta.removed` in one part. */
export const CATALOG_PART_ENTRIES_MAX = 10_000;

/** Longest path in a `catalog.delta` (Linux's PATH_MAX); a longer one is left out of the catalogue. */
export const CATALOG_PATH_MAX_LENGTH = 4096;

/** Longest `catalog.delta.tag`: a source group name. */
export const CATALOG_TAG_MAX_LENGTH = 255;

/** What the server made of a `catalog.delta` (`catalog.ack.status`). */
export const CATALOG_ACK_STATUSES = ["applied", "resend_full", "refused"] as const;

/** How long a signed restore order stays good: enough for a restore queued behind a long job. */
export const RESTORE_ORDER_TTL_MS = 24 * 60 * 60 * 1000;

/** Most entries of `hello.agent_dirs`: three directories, each as configured and after symlinks. */
export const AGENT_DIRS_MAX = 8;

/** Longest entry of `hello.agent_dirs`, in UTF-16 units (Linux's PATH_MAX). */
export const AGENT_DIR_MAX_LENGTH = 4096;

/** Most snapshot ids one `copy` may name: one `restic copy` argv stays short. */
export const COPY_SNAPSHOTS_MAX = 100;

/** Most snapshot ids one `forget` may name: one `restic forget` argv stays short. */
export const FORGET_SNAPSHOTS_MAX = 100;

/**
 * The first protocol whose agents answer `dump.request` (a file or folder of a snapshot streamed
 * with `restic dump`); the server never sends one to an older agent.
 */
export const DOWNLOAD_PROTOCOL_VERSION = 7;

/**
 * Most bytes of file data one `dump.chunk` carries (before base64): 256 KiB, about 350,000
 * characters of base64, well inside MAX_FRAME_BYTES with the envelope around it.
 */
export const DUMP_CHUNK_MAX_BYTES = 256 * 1024;

/**
 * Most `dump.chunk` frames an agent sends ahead of the server's `dump.ack`: with 256 KiB chunks,
 * at most 2 MiB of one download is in flight; restic's output waits in its pipe meanwhile.
 */
export const DUMP_WINDOW_CHUNKS = 8;

/** What `dump.request.archive` may ask `restic dump --archive` for (restic 0.12 and later). */
export const DUMP_ARCHIVE_FORMATS = ["tar", "zip"] as const;

/**
 * How a download ended (`dump.end.status`): `too_large` when the output passed
 * `dump.request.max_bytes` and the agent stopped restic.
 */
export const DUMP_END_STATUSES = ["succeeded", "failed", "cancelled", "too_large"] as const;

/**
 * Most files one restore drill samples. The sample travels as one `--include` argument per file,
 * so the bound keeps restic's argv far below the kernel's limit (paths run up to 4 KiB).
 */
export const DRILL_MAX_SAMPLE_FILES = 100;

/**
 * Longest child name a `tree.list` cursor may be, in UTF-16 units. File systems stop at 255 bytes
 * or 255 UTF-16 units; the margin is for the odd FUSE mount, the bound is for the frame.
 */
export const TREE_CHILD_NAME_MAX_LENGTH = 1024;

/**
 * Longest `hello.hostname`, in UTF-16 units: a DNS name's limit. Bounded so that a hostile agent
 * cannot store megabytes in the host row (or overflow its index).
 */
export const HOSTNAME_MAX_LENGTH = 253;

/** Longest `hello.agent_version` and `hello.tool_version` (semver with pre-release and build: ample). */
export const VERSION_MAX_LENGTH = 64;

/** Longest `hello.os` and `hello.arch` (Node.js names them `linux`, `x64`). */
export const PLATFORM_NAME_MAX_LENGTH = 32;

/** The server answers a lower `hello.protocol_version` with `ErrProtocolTooOld` and close 4001. */
export const MIN_AGENT_PROTOCOL_VERSION = 1;

/** Error codes carried by the `error` message and by HTTP error bodies (`unauthorised` on upgrade). */
export const ERROR_CODES = {
  /** British spelling on purpose: a fixed contract value. */
  unauthorised: "unauthorised",
  protocolTooOld: "ErrProtocolTooOld",
  invalidMessage: "invalid_message",
  unknownType: "unknown_type",
  notFound: "not_found",
  hostDeleted: "host_deleted",
  internal: "internal",
} as const;
export type ErrorCode = (typeof ERROR_CODES)[keyof typeof ERROR_CODES];

/** WebSocket close codes (application range 4000-4999). */
export const CLOSE_CODES = {
  noHello: 4000,
  protocolTooOld: 4001,
  replaced: 4002,
  hostDeleted: 4003,
  tooManyInvalidFrames: 4008,
} as const;
export type CloseCode = (typeof CLOSE_CODES)[keyof typeof CLOSE_CODES];

/** Close codes after which the agent exits non-zero instead of reconnecting. */
export const FATAL_CLOSE_CODES: readonly CloseCode[] = [CLOSE_CODES.protocolTooOld, CLOSE_CODES.hostDeleted];

export function isFatalCloseCode(code: number): boolean {
  return (FATAL_CLOSE_CODES as readonly number[]).includes(code);
}

/** Larger frames are refused before parsing, so a hostile peer cannot make us parse megabytes. */
export const MAX_FRAME_BYTES = 1024 * 1024;

/**
 * Most parts one `snapshots.report` may be split into (since protocol 2); a larger `parts` is
 * `invalid_message`. It bounds what a receiver holds for one report to 64 frames (64 MiB); at the
 * agent's 512 KiB per part it carries about 100,000 snapshots.
 */
export const SNAPSHOTS_REPORT_MAX_PARTS = 64;

/** Deeper JSON is refused: real messages nest about five levels, and deep values overflow the stack. */
export const MAX_JSON_DEPTH = 32;

export const HEARTBEAT_INTERVAL_MS = 30_000;
export const HELLO_DEADLINE_MS = 10_000;
/** Three missed heartbeats. */
export const OFFLINE_AFTER_MS = 90_000;
/** At most one `job.progress` per job in this interval; the first one is sent at once. */
export const PROGRESS_MIN_INTERVAL_MS = 1_000;

/** Exponential from 1 s, doubling, cap 60 s, full jitter; reset after 60 s of a stable connection. */
export const RECONNECT_BACKOFF = { initialMs: 1_000, maxMs: 60_000, resetAfterMs: 60_000 } as const;

/** This many invalid frames within the window close the connection with 4008. */
export const INVALID_FRAME_LIMIT = { count: 20, windowMs: 60_000 } as const;

export const JOB_KINDS = [
  "backup",
  "forget",
  "prune",
  "check",
  "unlock",
  "init",
  "restore",
  "diff",
  "drill",
  "copy",
] as const;

/** Kinds that need the admin credential slot; their `command.run` is preceded by `config.update` admin. */
export const ADMIN_JOB_KINDS: readonly (typeof JOB_KINDS)[number][] = ["prune", "unlock"];

export const JOB_STATUSES = ["queued", "running", "succeeded", "failed", "cancelled", "lost"] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export const ACTIVE_JOB_STATUSES = ["queued", "running"] as const;
export type ActiveJobStatus = (typeof ACTIVE_JOB_STATUSES)[number];

/** The statuses an agent reports in `job.finished`; `lost` is decided by the server alone. */
export const FINISHED_JOB_STATUSES = ["succeeded", "failed", "cancelled"] as const;

export function isActiveJobStatus(status: string): status is ActiveJobStatus {
  return (ACTIVE_JOB_STATUSES as readonly string[]).includes(status);
}

export const ACTOR_KINDS = ["user", "schedule", "system"] as const;
export type ActorKind = (typeof ACTOR_KINDS)[number];

/** Retention keys of `keep` that count snapshots (integers >= 1). */
export const KEEP_COUNT_KEYS = ["last", "hourly", "daily", "weekly", "monthly", "yearly"] as const;
export type KeepCountKey = (typeof KEEP_COUNT_KEYS)[number];

/** Retention keys of `keep` that take a restic duration (`30d`, `1y6m`). */
export const KEEP_WITHIN_KEYS = [
  "within",
  "within_hourly",
  "within_daily",
  "within_weekly",
  "within_monthly",
  "within_yearly",
] as const;
export type KeepWithinKey = (typeof KEEP_WITHIN_KEYS)[number];

export const KEEP_KEYS = [...KEEP_COUNT_KEYS, ...KEEP_WITHIN_KEYS] as const;
export type KeepKey = (typeof KEEP_KEYS)[number];

/** `mirror` (protocol 8): the second repository `copy` writes to. */
export const CREDENTIAL_SLOTS = ["repo", "admin", "mirror"] as const;

export const LOG_STREAMS = ["stdout", "stderr", "agent"] as const;

/** What runs the agent: its JavaScript bundle under a Node.js it found, or a single executable (Node SEA). */
export const AGENT_KINDS = ["bundle", "sea"] as const;

/**
 * Outcomes of a `command.update` that the agent reports: `restarting` (verified and swapped; the
 * agent exits now so that its service manager starts the new version), `refused` (download,
 * SHA-256, signature or staging failed; the running agent stays), `rolled_back` (the new version
 * did not connect within `UPDATE_TRIAL_MS`; the previous one runs again).
 */
export const UPDATE_RESULT_STATUSES = ["restarting", "refused", "rolled_back"] as const;

/** A new agent version that has not connected this long after its start is rolled back. */
export const UPDATE_TRIAL_MS = 120_000;

export const TREE_ENTRY_TYPES = ["dir", "file", "symlink", "other"] as const;

export const CHECK_STATUSES = ["ok", "errors", "failed"] as const;
