/**
 * @module The fleet's file catalogue (issue 38.3), written by the server from the agents'
 * `catalog.delta` frames and read by search. A lineage is one host's source group (snapshot tag);
 * a version row is one distinct (type, size, mtime) of a path, held by the group's snapshots from
 * `from_at` up to (not including) `until_at`, null while the newest applied snapshot holds it.
 * Ids are 64-bit hashes the server computes (catalog/catalog-keys.ts), kept as decimal strings.
 */
import type { TREE_ENTRY_TYPES } from "@fleetback/protocol";
import { sql } from "drizzle-orm";
import { bigint, check, index, integer, pgTable, primaryKey, text, unique } from "drizzle-orm/pg-core";
import { timestamptz, updatedAt } from "./columns.js";
import { hostIdColumn } from "./references.js";

export const catalogLineages = pgTable(
  "catalog_lineages",
  {
    id: bigint("id", { mode: "bigint" }).primaryKey(),
    hostId: hostIdColumn(),
    tag: text("tag").notNull(),
    // The applied base: the newest snapshot of the group the catalogue is up to date with.
    snapshotId: text("snapshot_id"),
    snapshotAt: timestamptz("snapshot_at"),
    // A delta being applied part by part; its parts so far are undone if it starts over.
    pendingSnapshotId: text("pending_snapshot_id"),
    pendingAt: timestamptz("pending_at"),
    pendingPart: integer("pending_part"),
    updatedAt: updatedAt(),
  },
  (t) => [
    unique("catalog_lineages_host_id_tag_key").on(t.hostId, t.tag),
    check(
      "catalog_lineages_pending_check",
      sql`(${t.pendingSnapshotId} IS NULL) = (${t.pendingAt} IS NULL) AND (${t.pendingSnapshotId} IS NULL) = (${t.pendingPart} IS NULL)`,
    ),
  ],
);

/** `lineage_id`, cascading: a lineage's rows go with it. */
function lineageIdColumn() {
  return bigint("lineage_id", { mode: "bigint" })
    .notNull()
    .references(() => catalogLineages.id, { onDelete: "cascade" });
}

export const catalogDirs = pgTable(
  "catalog_dirs",
  {
    lineageId: lineageIdColumn(),
    id: bigint("id", { mode: "bigint" }).notNull(),
    path: text("path").notNull(),
  },
  (t) => [primaryKey({ name: "catalog_dirs_pkey", columns: [t.lineageId, t.id] })],
);

export const fileVersions = pgTable(
  "file_versions",
  {
    lineageId: lineageIdColumn(),
    dirId: bigint("dir_id", { mode: "bigint" }).notNull(),
    name: text("name").notNull(),
    type: text("type").$type<(typeof TREE_ENTRY_TYPES)[number]>().notNull(),
    size: bigint("size", { mode: "number" }).notNull(),
    mtime: timestamptz("mtime").notNull(),
    fromAt: timestamptz("from_at").notNull(),
    untilAt: timestamptz("until_at"),
  },
  (t) => [
    index("file_versions_path_idx").on(t.lineageId, t.dirId, t.name, t.fromAt),
    // Per lineage: search walks the fleet host by host and stops once a page is full.
    index("file_versions_name_idx").using("btree", t.lineageId, sql`lower(${t.name}) text_pattern_ops`),
    index("file_versions_name_reversed_idx").using(
      "btree",
      t.lineageId,
      sql`reverse(lower(${t.name})) text_pattern_ops`,
    ),
    check("file_versions_type_check", sql`${t.type} IN ('dir', 'file', 'symlink', 'other')`),
    check("file_versions_range_check", sql`${t.untilAt} IS NULL OR ${t.untilAt} >= ${t.fromAt}`),
  ],
);
