/**
 * @module What the agent reports about a host's repository: the cached snapshot projection and
 * the partial-update stats record.
 */
import { sql } from "drizzle-orm";
import {
  bigint,
  boolean,
  check,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
} from "drizzle-orm/pg-core";
import { timestamptz, updatedAt } from "./columns.js";
import { hostIdColumn, hostIdKey } from "./references.js";

export const CHECK_STATUSES = ["ok", "errors", "failed"] as const;
export type CheckStatus = (typeof CHECK_STATUSES)[number];

/** Replaced as a whole by each `snapshots.report` (authoritative, empty list allowed). */
export const snapshots = pgTable(
  "snapshots",
  {
    hostId: hostIdColumn(),
    // The tool's full snapshot id; unique only within one repository, hence the composite key.
    id: text("id").notNull(),
    shortId: text("short_id").notNull(),
    time: timestamptz("time").notNull(),
    hostname: text("hostname").notNull(),
    paths: jsonb("paths").$type<string[]>().notNull().default([]),
    tags: jsonb("tags").$type<string[]>().notNull().default([]),
    // Zero for tools older than 0.16, which report no summary block.
    /** null: the host's restic (before 0.17) does not report it. */
    sizeBytes: bigint("size_bytes", { mode: "number" }),
    fileCount: bigint("file_count", { mode: "number" }),
    // Made under one of the host's snapshot hostnames; false for another machine's snapshot in a
    // shared repository, which retention, freshness and counts leave alone.
    isOwn: boolean("is_own").notNull().default(true),
    // When the server first stored it (the database's clock); null for rows from before 0019.
    // Retention decided by the server counts a snapshot whose time is far from this as suspect.
    firstSeenAt: timestamptz("first_seen_at").default(sql`now()`),
  },
  (t) => [
    primaryKey({ name: "snapshots_pkey", columns: [t.hostId, t.id] }),
    index("snapshots_host_id_time_idx").on(t.hostId, t.time.desc()),
  ],
);

/**
 * Per host and tag, the newest snapshot carrying it; rewritten with `snapshots` on every report,
 * so freshness of all groups is one join on the key.
 */
export const snapshotTags = pgTable(
  "snapshot_tags",
  {
    hostId: hostIdColumn(),
    tag: text("tag").notNull(),
    latestAt: timestamptz("latest_at").notNull(),
    snapshotCount: integer("snapshot_count").notNull(),
  },
  (t) => [
    primaryKey({ name: "snapshot_tags_pkey", columns: [t.hostId, t.tag] }),
    check("snapshot_tags_snapshot_count_check", sql`${t.snapshotCount} > 0`),
  ],
);

/** Every field but the key is optional: a `repo.stats` report changes only what it carries. */
export const repoStats = pgTable(
  "repo_stats",
  {
    hostId: hostIdKey(),
    lastCheckStatus: text("last_check_status").$type<CheckStatus>(),
    lastCheckAt: timestamptz("last_check_at"),
    // The last check that found no error (last_check_at moves on with a failed one).
    lastCheckOkAt: timestamptz("last_check_ok_at"),
    totalSizeBytes: bigint("total_size_bytes", { mode: "number" }),
    rawSizeBytes: bigint("raw_size_bytes", { mode: "number" }),
    totalFileCount: bigint("total_file_count", { mode: "number" }),
    snapshotCount: integer("snapshot_count"),
    compressionRatio: doublePrecision("compression_ratio"),
    lastPruneAt: timestamptz("last_prune_at"),
    lastForgetAt: timestamptz("last_forget_at"),
    updatedAt: updatedAt(),
  },
  (t) => [
    check("repo_stats_last_check_status_check", sql`${t.lastCheckStatus} in ('ok', 'errors', 'failed')`),
  ],
);

export type Snapshot = typeof snapshots.$inferSelect;
export type NewSnapshot = typeof snapshots.$inferInsert;
export type SnapshotTag = typeof snapshotTags.$inferSelect;
export type RepoStats = typeof repoStats.$inferSelect;
export type NewRepoStats = typeof repoStats.$inferInsert;
