/**
 * @module openapi/host-schemas
 * Answers about hosts: the fleet list row (fleet/fleet-list.ts fleetPageJson), one host's detail
 * (fleet/host-detail.ts hostDetailJson) with its mirror (mirror/mirror-state.ts mirrorJson) and
 * last restore drill (maintenance/last-drill.ts lastDrillJson), and what a host change answers.
 */
import {
  CHECK_STATUSES,
  HOST_AGENT_KINDS,
  HOST_STATUSES,
  JOB_KINDS,
  JOB_STATUSES,
  UPDATE_STATES,
} from "@fleetback/db";
import { Caps, DrillMismatch } from "@fleetback/protocol";
import { Type } from "typebox";
import { FLEET_ORDERS, FLEET_SORTS } from "../fleet/fleet-query.js";
import { HOST_STATES } from "../freshness/host-states.js";
import { PROTECTION_STATES } from "../freshness/protection.js";
import {
  DateTime,
  Enum,
  Id,
  Nullable,
  NullableDateTime,
  NullableInteger,
  NullableString,
} from "./common-schemas.js";

export const JobStatus = Enum(JOB_STATUSES);
export const JobKind = Enum(JOB_KINDS);
export const FRESHNESS_STATES = ["fresh", "due", "overdue", "never", "unscheduled"] as const;
export const FreshnessState = Enum(
  FRESHNESS_STATES,
  "never: scheduled but no snapshot yet, before its first deadline (from then on overdue); unscheduled: no enabled schedule fires the group",
);
export const HostProtection = Enum(
  PROTECTION_STATES,
  "the host's worst: no_repository, no_group, overdue, unscheduled (a group no schedule fires), never (a scheduled group never backed up yet), due, fresh",
);

/** A credential slot: whether it is bound, its URL without credentials and its user; never a password. */
export const CredentialSlot = Type.Object(
  {
    state: Enum(["absent", "bound", "unreadable"]),
    url: Type.Optional(Type.String()),
    username: Type.Optional(Type.String()),
    login_password_set: Type.Optional(
      Type.Boolean({
        description:
          "bound slots: the repository server login of `username` is a password of its own (login_password), not the repository password; its value is never shown",
      }),
    ),
    withheld_reason: Type.Optional(
      Type.String({
        description:
          "why the slot is not sent to the host's agent: a separate login password needs an agent of protocol 11",
      }),
    ),
  },
  { $id: "CredentialSlot" },
);

const updateFields = {
  version: Type.String(),
  state: Enum(UPDATE_STATES),
  error: NullableString,
  state_at: NullableDateTime,
};

/** The host's last requested agent update; null when none was asked for. */
export const AgentUpdate = Type.Object(updateFields, { $id: "AgentUpdate" });

const fleetRowFields = {
  id: Id,
  name: Type.String(),
  os: Type.String(),
  arch: Type.String(),
  status: Enum(HOST_STATUSES),
  last_seen_at: NullableDateTime,
  agent_version: Type.String(),
  tool_version: Type.String({ description: "empty when restic is missing on the host" }),
  protocol_version: Type.Union([Type.Integer(), Type.Null()], { description: "null until the first hello" }),
  agent_kind: Enum(HOST_AGENT_KINDS),
  update: Nullable(AgentUpdate),
  snapshot_count: Type.Integer({ minimum: 0 }),
  open_alerts: Type.Integer({ minimum: 0 }),
  last_check_status: Nullable(Enum(CHECK_STATUSES)),
  last_check_at: NullableDateTime,
};

export const FleetHost = Type.Object(
  {
    ...fleetRowFields,
    failing: Type.Boolean({ description: "an open alert of a failed job" }),
    last_snapshot_at: NullableDateTime,
    last_job: Nullable(
      Type.Object({ id: Id, kind: JobKind, status: JobStatus, finished_at: NullableDateTime }),
    ),
    freshness: Type.Union([FreshnessState, Type.Null()], {
      description: "the worst state of the host's source groups; null when it has none",
    }),
    protection: HostProtection,
    next_run_at: NullableDateTime,
    labels: Type.Record(Type.String(), Type.String(), { description: "the host's labels, key to value" }),
  },
  { $id: "FleetHost" },
);

export const FleetPage = Type.Object(
  {
    hosts: Type.Array(FleetHost),
    total: Type.Integer({ minimum: 0, description: "hosts the filter matches" }),
    page: Type.Integer({ minimum: 1 }),
    pages: Type.Integer({ minimum: 1 }),
    limit: Type.Integer({ minimum: 1 }),
    sort: Enum(FLEET_SORTS),
    order: Enum(FLEET_ORDERS),
    state: Nullable(Enum(HOST_STATES)),
    q: Type.String(),
    selector: Type.String({ description: "the label selector as given; empty: none" }),
  },
  { $id: "FleetPage" },
);

export const LastDrill = Type.Object(
  {
    job_id: Id,
    status: JobStatus,
    finished_at: NullableDateTime,
    snapshot_id: NullableString,
    files_in_snapshot: NullableInteger,
    files_checked: NullableInteger,
    bytes_checked: NullableInteger,
    mismatch_count: NullableInteger,
    mismatches: Type.Array(DrillMismatch),
    error: NullableString,
  },
  { $id: "LastDrill" },
);

export const MirrorState = Type.Object(
  {
    configured: Type.Boolean(),
    repository: CredentialSlot,
    agent_supported: Type.Boolean({ description: "the host's agent speaks protocol 8 (copy jobs)" }),
    last_copy: Nullable(
      Type.Object({ job_id: Id, status: JobStatus, finished_at: NullableDateTime, error: NullableString }),
    ),
    last_good_copy_at: NullableDateTime,
    snapshot_count: NullableInteger,
    latest_snapshot_at: NullableString,
    snapshots_behind: NullableInteger,
    lag_seconds: NullableInteger,
  },
  { $id: "MirrorState" },
);

export const RepositoryOutage = Type.Object(
  {
    since: DateTime,
    last_failed_at: DateTime,
    last_error: Type.String(),
    last_job_id: Nullable(Id),
    failed_jobs: Type.Integer({ minimum: 1 }),
  },
  {
    $id: "RepositoryOutage",
    description:
      "the host's repository did not answer: since the end of the first job that found it unreachable, until a job reaches it again",
  },
);

const HostRef = Type.Object({ id: Id, name: Type.String() });

export const DeletionProtection = Type.Object(
  {
    protected: Type.Boolean({
      description: "a keeper maintains the repository: the host holds no delete-capable credential",
    }),
    keeper: Nullable(HostRef),
    keeps: Type.Array(HostRef, { description: "hosts whose repositories this host keeps" }),
  },
  { $id: "DeletionProtection" },
);

export const DeletionHold = Type.Object(
  {
    id: Id,
    kind: Enum(["backup_anomaly", "large_forget"]),
    reason: Type.String(),
    details: Type.Record(Type.String(), Type.Unknown()),
    created_at: DateTime,
    released_at: NullableDateTime,
    release_reason: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: "DeletionHold" },
);

export const ReleaseHoldAnswer = Type.Object({
  released: Type.Literal(true),
  job_id: Type.Union([Id, Type.Null()], { description: "the approved forget of a large_forget hold" }),
});

export const RenamedHost = Type.Object({
  host: Type.Object({ id: Id, name: Type.String() }),
});

export const KeeperAnswer = Type.Object({
  keeper_host_id: Type.Union([Id, Type.Null()]),
  pushed: Type.Boolean({ description: "the host's agent was told now (else at its next hello)" }),
});

export const HostDetail = Type.Object(
  {
    id: Id,
    name: Type.String(),
    reported_hostname: Type.Union([Type.String(), Type.Null()], {
      description: "what the agent's last hello called the host",
    }),
    hostname_changes: Type.Array(Type.Object({ from: Type.String(), to: Type.String(), at: DateTime })),
    os: Type.String(),
    arch: Type.String(),
    agent_version: Type.String(),
    tool_version: Type.String(),
    protocol_version: NullableInteger,
    agent_kind: Enum(HOST_AGENT_KINDS),
    update: Nullable(Type.Object({ ...updateFields, requested_at: NullableDateTime })),
    refused_hello: Nullable(Type.Object({ protocol_version: Type.Integer(), at: NullableDateTime })),
    status: Enum(HOST_STATUSES),
    connected: Type.Boolean({ description: "the agent's socket is open to this server now" }),
    last_seen_at: NullableDateTime,
    snapshot_count: Type.Integer({ minimum: 0, description: "the host's own snapshots" }),
    other_snapshot_count: Type.Integer({
      minimum: 0,
      description: "other machines' snapshots in the same repository (shared, or made before Fleetback)",
    }),
    restic_host: Type.String({
      description: "the hostname this host's backups are made under (restic --host)",
    }),
    snapshot_hostnames: Type.Array(Type.String(), {
      description:
        "every hostname whose snapshots count as this host's own: restic_host and the hostnames its agent reported",
    }),
    bandwidth_up_kbps: NullableInteger,
    bandwidth_down_kbps: NullableInteger,
    schedule_version: Type.Integer(),
    schedule_acked_version: Type.Integer(),
    created_at: DateTime,
    repository: CredentialSlot,
    admin_credentials: CredentialSlot,
    repository_init: Type.Object({
      state: Enum(["never", "queued", "running", "initialised", "failed", "cancelled", "lost"]),
      job_id: Type.Optional(Id),
    }),
    last_drill: Nullable(LastDrill),
    mirror: MirrorState,
    repository_outage: Nullable(RepositoryOutage),
    deletion_protection: DeletionProtection,
    deletion_holds: Type.Array(DeletionHold, {
      description: "open holds: while any stands, no forget or prune of the host's repository runs",
    }),
  },
  { $id: "Host" },
);

export const HostAnswer = Type.Object({ host: HostDetail });

export const CredentialsPushed = Type.Object({
  pushed: Type.Boolean({ description: "sent to the connected agent now (else at its next hello)" }),
});

export const BandwidthAnswer = Type.Object({ caps: Caps, pushed: Type.Boolean() });

export const MirrorCredentialsAnswer = Type.Object({ ok: Type.Literal(true) });
