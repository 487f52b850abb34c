/**
 * @module Managed hosts and their sealed repository credentials.
 */
import { AGENT_KINDS } from "@fleetback/protocol";
import { sql } from "drizzle-orm";
import {
  type AnyPgColumn,
  boolean,
  check,
  index,
  integer,
  jsonb,
  pgTable,
  text,
  unique,
} from "drizzle-orm/pg-core";
import { bytea, createdAt, timestamptz, updatedAt } from "./columns.js";

export const HOST_STATUSES = ["online", "offline"] as const;
export type HostStatus = (typeof HOST_STATUSES)[number];

/**
 * What the agent runs as: one JavaScript bundle run by node, or a Node single executable. The
 * hello's vocabulary (protocol's AGENT_KINDS); vocabulary.test.ts ties the CHECK to it.
 */
export const HOST_AGENT_KINDS = AGENT_KINDS;
export type HostAgentKind = (typeof HOST_AGENT_KINDS)[number];

/** How far a requested agent update got (pending: waits for the host; sent: command.update out). */
export const UPDATE_STATES = [
  "pending",
  "sent",
  "restarting",
  "succeeded",
  "refused",
  "rolled_back",
  "failed",
] as const;
export type UpdateState = (typeof UPDATE_STATES)[number];

export const hosts = pgTable(
  "hosts",
  {
    id: text("id").primaryKey(),
    // The name the host was enrolled (approved) under; a hello does not change it, so the in-place
    // restore confirmation names something no agent can rewrite.
    name: text("name").notNull(),
    // What the agent's last hello called the host; null until its first hello.
    reportedHostname: text("reported_hostname"),
    // The IANA zone the agent's scheduler reads cron in, from its hello; null: FLEETBACK_TZ.
    timeZone: text("time_zone"),
    os: text("os").notNull(),
    arch: text("arch").notNull(),
    agentVersion: text("agent_version").notNull(),
    // Empty when the backup tool is absent on the host.
    toolVersion: text("tool_version").notNull().default(""),
    // Null until the first hello.
    protocolVersion: integer("protocol_version"),
    agentKind: text("agent_kind").$type<HostAgentKind>().notNull().default("bundle"),
    status: text("status").$type<HostStatus>().notNull().default("offline"),
    lastSeenAt: timestamptz("last_seen_at"),
    // Own snapshots only (snapshots.is_own); other machines' in the same repository are counted apart.
    snapshotCount: integer("snapshot_count").notNull().default(0),
    otherSnapshotCount: integer("other_snapshot_count").notNull().default(0),
    // The hostname this host's backups are made under (restic --host): fixed at enrolment, unique
    // in the fleet, so a renamed machine keeps one history and two hosts sharing a repository
    // never mix theirs.
    resticHost: text("restic_host").notNull(),
    // Every hostname this host's snapshots may carry: restic_host and the hostnames its agent
    // reported (history from before Fleetback or a rename); bounded by FORGET_HOSTS_MAX.
    snapshotHostnames: jsonb("snapshot_hostnames").$type<string[]>().notNull().default([]),
    snapshotsRefreshedAt: timestamptz("snapshots_refreshed_at"),
    // The agent's own directories from its hello (protocol 12), as paths of its snapshots: never
    // backed up, restored, listed or downloaded. Empty before such a hello; the packaged defaults
    // are refused regardless (server hosts/agent-dirs.ts).
    agentDirs: jsonb("agent_dirs").$type<string[]>().notNull().default([]),
    // KiB/s; null means no cap.
    bandwidthUpKbps: integer("bandwidth_up_kbps"),
    bandwidthDownKbps: integer("bandwidth_down_kbps"),
    preHookDefault: bytea("pre_hook_default"),
    postHookDefault: bytea("post_hook_default"),
    scheduleVersion: integer("schedule_version").notNull().default(0),
    scheduleAckedVersion: integer("schedule_acked_version").notNull().default(0),
    // SHA-256 hex of the agent bearer token; null once revoked.
    agentTokenHash: text("agent_token_hash").unique("hosts_agent_token_hash_key"),
    // The last requested agent update; version and state are both set or both null.
    updateVersion: text("update_version"),
    // Every schedule goes to the agent disabled while set (issue 37.5); each keeps its own setting.
    schedulesPaused: boolean("schedules_paused").notNull().default(false),
    updateState: text("update_state").$type<UpdateState>(),
    updateError: text("update_error"),
    updateRequestedAt: timestamptz("update_requested_at"),
    updateStateAt: timestamptz("update_state_at"),
    // The last hello refused as ErrProtocolTooOld (the agent stops reconnecting after it).
    refusedProtocolVersion: integer("refused_protocol_version"),
    refusedAt: timestamptz("refused_at"),
    // The keeper that maintains this host's repository (issue 33); set: the host is protected and
    // never holds delete authority. A keeper that still keeps a host cannot be deleted.
    keeperHostId: text("keeper_host_id").references((): AnyPgColumn => hosts.id),
    // key=value labels (issue 37), bounded and validated by the server's labels/label-rules.ts;
    // GIN-indexed so a label selector over the fleet is an index scan.
    labels: jsonb("labels").$type<Record<string, string>>().notNull().default({}),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    check("hosts_status_check", sql`${t.status} in ('online', 'offline')`),
    check("hosts_snapshot_count_check", sql`${t.snapshotCount} >= 0`),
    check("hosts_other_snapshot_count_check", sql`${t.otherSnapshotCount} >= 0`),
    unique("hosts_restic_host_key").on(t.resticHost),
    check("hosts_bandwidth_up_kbps_check", sql`${t.bandwidthUpKbps} > 0`),
    check("hosts_bandwidth_down_kbps_check", sql`${t.bandwidthDownKbps} > 0`),
    check("hosts_agent_kind_check", sql`${t.agentKind} in ('bundle', 'sea')`),
    check(
      "hosts_update_state_check",
      sql`${t.updateState} in ('pending', 'sent', 'restarting', 'succeeded', 'refused', 'rolled_back', 'failed')`,
    ),
    check("hosts_update_pair_check", sql`(${t.updateVersion} is null) = (${t.updateState} is null)`),
    // Announce reports a hostname collision by looking the name up.
    index("hosts_name_idx").on(t.name),
    check("hosts_keeper_not_self_check", sql`${t.keeperHostId} <> ${t.id}`),
    index("hosts_keeper_host_id_idx").on(t.keeperHostId).where(sql`${t.keeperHostId} is not null`),
    check("hosts_labels_object_check", sql`jsonb_typeof(${t.labels}) = 'object'`),
    index("hosts_labels_idx").using("gin", t.labels),
  ],
);

/**
 * One record per host holding both credential kinds; each slot is sealed with the host id as
 * additional data, so a blob copied to another host fails to open.
 */
export const hostCredentials = pgTable("host_credentials", {
  hostId: text("host_id")
    .primaryKey()
    .references(() => hosts.id, { onDelete: "cascade" }),
  repoSealed: bytea("repo_sealed"),
  adminSealed: bytea("admin_sealed"),
  // The mirror repository `copy` jobs write to (issue 18); null: the host has no mirror.
  mirrorSealed: bytea("mirror_sealed"),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

export type Host = typeof hosts.$inferSelect;
export type NewHost = typeof hosts.$inferInsert;
export type HostCredentials = typeof hostCredentials.$inferSelect;
export type NewHostCredentials = typeof hostCredentials.$inferInsert;
