/**
 * @module catalog/file-history
 * One path's versions on one host over time (issue 38.3): newest first, each with the range of
 * snapshots that hold it and the snapshots themselves (a restore picks one). A path lives in one
 * folder row per lineage, so this is an index lookup per source group of the host.
 */
import { type Database, executeRows } from "@fleetback/db";
import { sql } from "drizzle-orm";
import { dirKey, splitPath } from "./catalog-keys.js";
import { type HitRow, hitOf, type SearchHit, type SnapshotRef, versionRowsSql } from "./catalog-search.js";

/** Most snapshots listed under one version; the range and the count say the rest. */
export const HISTORY_SNAPSHOTS_MAX = 50;
export const HISTORY_VERSIONS_MAX = 500;

export interface FileVersion extends SearchHit {
  snapshots: SnapshotRef[];
}

export async function fileHistory(db: Database, hostId: string, path: string): Promise<FileVersion[]> {
  const split = splitPath(path);
  if (split === undefined) {
    return [];
  }
  const rows = await executeRows<HitRow>(
    db,
    versionRowsSql(
      sql`l.host_id = ${hostId} and v.dir_id = ${dirKey(split.dir).toString()}::bigint and v.name = ${split.name}`,
      {},
      { inner: sql`v.from_at desc, l.tag`, outer: sql`from_at desc, tag` },
      HISTORY_VERSIONS_MAX,
    ),
  );
  return Promise.all(
    rows.map(async (row) => {
      const version = hitOf(row);
      const snapshots = await executeRows<{ id: string; time: string | Date }>(
        db,
        sql`select s.id, s.time from snapshots s
             where s.host_id = ${hostId} and s.is_own and s.tags @> jsonb_build_array(${version.group}::text)
               and s.time >= ${row.from_key}::timestamptz
               and (${row.until_key}::timestamptz is null or s.time < ${row.until_key}::timestamptz)
             order by s.time desc limit ${HISTORY_SNAPSHOTS_MAX}`,
      );
      return { ...version, snapshots: snapshots.map((s) => ({ id: s.id, time: new Date(s.time) })) };
    }),
  );
}
