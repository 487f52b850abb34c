/**
 * @module snapshots/repo-stats
 * What an agent learned about its repository (`repo.stats`, after check, prune, forget and
 * backup). A report is a partial projection: only the fields present change; one absent field
 * never erases what an earlier report said.
 *
 * The wire names are frozen and easy to misread (packages/agent/src/jobs/raw-data-stats.ts):
 * `raw_size_bytes` is restic's `total_size` in raw-data mode, the bytes the repository stores
 * (compressed, deduplicated), and `total_size_bytes` is its `total_uncompressed_size`, the same
 * blobs before compression (restic >= 0.15 only). The columns keep the wire names; everything a
 * person or an API client reads says which size it is: `stored_size_bytes` and
 * `uncompressed_size_bytes`.
 */
import { type Database, type RepoStats as RepoStatsRow, repoStats } from "@fleetback/db";
import type { RepoStats } from "@fleetback/protocol";
import { eq } from "drizzle-orm";
import { presentFields } from "../present-fields.js";

/** Upserts the fields present; returns the row as it stands afterwards. */
export async function applyRepoStats(
  db: Database,
  hostId: string,
  report: RepoStats,
  now: Date,
): Promise<RepoStatsRow> {
  const patch = presentFields<RepoStats, RepoStatsRow>(report, {
    last_check_status: "lastCheckStatus",
    total_size_bytes: "totalSizeBytes",
    raw_size_bytes: "rawSizeBytes",
    total_file_count: "totalFileCount",
    snapshot_count: "snapshotCount",
    compression_ratio: "compressionRatio",
  });
  if (report.last_check_at !== undefined) {
    patch.lastCheckAt = new Date(report.last_check_at);
    if (report.last_check_status === "ok") {
      patch.lastCheckOkAt = patch.lastCheckAt;
    }
  }
  if (report.last_prune_at !== undefined) {
    patch.lastPruneAt = new Date(report.last_prune_at);
  }
  if (report.last_forget_at !== undefined) {
    patch.lastForgetAt = new Date(report.last_forget_at);
  }
  const [row] = await db
    .insert(repoStats)
    .values({ hostId, ...patch, updatedAt: now })
    .onConflictDoUpdate({ target: repoStats.hostId, set: { ...patch, updatedAt: now } })
    .returning();
  if (!row) {
    throw new Error("upsert into repo_stats returned no row");
  }
  return row;
}

export async function readRepoStats(db: Database, hostId: string): Promise<RepoStatsRow | undefined> {
  const [row] = await db.select().from(repoStats).where(eq(repoStats.hostId, hostId));
  return row;
}

/** Bytes the repository stores: restic's raw-data `total_size` (wire `raw_size_bytes`). */
export function storedSizeOf(row: Pick<RepoStatsRow, "rawSizeBytes"> | undefined): number | null {
  return row?.rawSizeBytes ?? null;
}

/** Those blobs before compression: restic's `total_uncompressed_size` (wire `total_size_bytes`). */
export function uncompressedSizeOf(row: Pick<RepoStatsRow, "totalSizeBytes"> | undefined): number | null {
  return row?.totalSizeBytes ?? null;
}

export function repoStatsJson(row: RepoStatsRow | undefined) {
  const stored = storedSizeOf(row);
  const uncompressed = uncompressedSizeOf(row);
  return {
    last_check_status: row?.lastCheckStatus ?? null,
    last_check_at: row?.lastCheckAt ?? null,
    last_check_ok_at: row?.lastCheckOkAt ?? null,
    stored_size_bytes: stored,
    /** null for restic 0.14, which does not report it. */
    uncompressed_size_bytes: uncompressed,
    /** Deprecated alias of uncompressed_size_bytes (the wire name), kept for existing clients. */
    total_size_bytes: uncompressed,
    /** Deprecated alias of stored_size_bytes (the wire name), kept for existing clients. */
    raw_size_bytes: stored,
    total_file_count: row?.totalFileCount ?? null,
    snapshot_count: row?.snapshotCount ?? null,
    compression_ratio: row?.compressionRatio ?? null,
    last_prune_at: row?.lastPruneAt ?? null,
    last_forget_at: row?.lastForgetAt ?? null,
    updated_at: row?.updatedAt ?? null,
  };
}
