/**
 * @module catalog/catalog-search
 * Search across the fleet's catalogue (issue 38.3). Each hit is one version of a path: identical
 * versions in many snapshots are one row already (catalog-apply.ts), and the hit names the range
 * of the group's snapshots that hold it, from the host's snapshot list, so a version whose
 * snapshots were all forgotten is no hit. The catalogue lives on the server, so an offline host is
 * searched like any other; a host that has sent no catalogue yet (never backed up since protocol
 * 15, or its agent is older) is listed as not searched, never silently missing.
 */
import { type Database, executeRows, hosts } from "@fleetback/db";
import { type SQL, sql } from "drizzle-orm";
import type { Selector } from "../labels/selector.js";
import { selectorSql } from "../labels/selector-sql.js";
import { joinPath } from "./catalog-keys.js";
import { type CatalogQuery, dirSql, nameSql } from "./catalog-query.js";

export const SEARCH_LIMIT_DEFAULT = 100;
export const SEARCH_LIMIT_MAX = 500;

export interface SearchFilters {
  hostIds?: readonly string[];
  selector?: Selector;
  groups?: readonly string[];
  /** Only versions held by a snapshot taken in [from, to]. */
  from?: Date;
  to?: Date;
}

export interface SnapshotRef {
  id: string;
  time: Date;
}

export interface SearchHit {
  host: { id: string; name: string };
  group: string;
  path: string;
  type: string;
  size: number;
  mtime: Date;
  snapshotCount: number;
  first: SnapshotRef;
  last: SnapshotRef;
  /** Still in the group's newest catalogued snapshot. */
  current: boolean;
}

export interface SearchResult {
  hits: SearchHit[];
  /** More hits follow: ask again with `offset` = offset + hits. */
  more: boolean;
  notCatalogued: { id: string; name: string }[];
}

export interface HitRow extends Record<string, unknown> {
  host_id: string;
  host_name: string;
  tag: string;
  dir: string;
  name: string;
  type: string;
  size: string | number;
  mtime: string | Date;
  until_at: string | Date | null;
  from_key: string;
  until_key: string | null;
  snapshot_count: string | number;
  first_id: string;
  first_time: string | Date;
  last_id: string;
  last_time: string | Date;
}

function hostFilters(filters: SearchFilters): SQL[] {
  const where: SQL[] = [];
  if (filters.hostIds !== undefined && filters.hostIds.length > 0) {
    where.push(sql`h.id = any(${sql.param([...filters.hostIds])}::text[])`);
  }
  if (filters.selector !== undefined && filters.selector.length > 0) {
    where.push(selectorSql(sql`h.labels`, filters.selector));
  }
  return where;
}

function snapshotWindow(filters: SearchFilters): SQL {
  const parts: SQL[] = [];
  if (filters.from !== undefined) {
    parts.push(sql` and s.time >= ${filters.from.toISOString()}::timestamptz`);
  }
  if (filters.to !== undefined) {
    parts.push(sql` and s.time <= ${filters.to.toISOString()}::timestamptz`);
  }
  return sql.join(parts, sql``);
}

export function hitOf(row: HitRow): SearchHit {
  return {
    host: { id: row.host_id, name: row.host_name },
    group: row.tag,
    path: joinPath(row.dir, row.name),
    type: row.type,
    size: Number(row.size),
    mtime: new Date(row.mtime),
    snapshotCount: Number(row.snapshot_count),
    first: { id: row.first_id, time: new Date(row.first_time) },
    last: { id: row.last_id, time: new Date(row.last_time) },
    current: row.until_at === null,
  };
}

/**
 * The version rows of `where`, each with the range of the group's snapshots that hold it (within
 * the filters' window); versions no snapshot holds are left out.
 */
export function versionRowsSql(
  where: SQL,
  filters: SearchFilters,
  order: SQL,
  limit: number,
  offset: number,
): SQL {
  return sql`
    select h.id as host_id, h.name as host_name, l.tag, d.path as dir, v.name, v.type, v.size, v.mtime,
           v.until_at, v.from_at::text as from_key, v.until_at::text as until_key, held.snapshot_count, held.first_id, held.first_time, held.last_id, held.last_time
      from file_versions v
      join catalog_lineages l on l.id = v.lineage_id
      join catalog_dirs d on d.lineage_id = v.lineage_id and d.id = v.dir_id
      join hosts h on h.id = l.host_id
      cross join lateral (
        select count(*) as snapshot_count,
               (array_agg(s.id order by s.time asc))[1] as first_id, min(s.time) as first_time,
               (array_agg(s.id order by s.time desc))[1] as last_id, max(s.time) as last_time
          from snapshots s
         where s.host_id = l.host_id and s.is_own and s.tags @> jsonb_build_array(l.tag)
           and s.time >= v.from_at and (v.until_at is null or s.time < v.until_at)${snapshotWindow(filters)}
      ) held
     where ${where} and held.snapshot_count > 0
     order by ${order}
     limit ${limit} offset ${offset}`;
}

export async function searchCatalogue(
  db: Database,
  query: CatalogQuery,
  filters: SearchFilters,
  page: { limit?: number; offset?: number } = {},
): Promise<SearchResult> {
  const limit = Math.min(page.limit ?? SEARCH_LIMIT_DEFAULT, SEARCH_LIMIT_MAX);
  const offset = page.offset ?? 0;
  const where = [nameSql(sql`v.name`, query.name), ...hostFilters(filters)];
  if (query.dir !== undefined) {
    where.push(dirSql(sql`d.path`, query.dir));
  }
  if (filters.groups !== undefined && filters.groups.length > 0) {
    where.push(sql`l.tag = any(${sql.param([...filters.groups])}::text[])`);
  }
  const rows = await executeRows<HitRow>(
    db,
    versionRowsSql(
      sql.join(where, sql` and `),
      filters,
      sql`h.name, h.id, d.path, v.name, l.tag, v.from_at desc`,
      limit + 1,
      offset,
    ),
  );
  const notCatalogued = await executeRows<{ id: string; name: string }>(
    db,
    sql`select h.id, h.name from ${hosts} h
         where ${sql.join([sql`true`, ...hostFilters(filters)], sql` and `)}
           and not exists (select 1 from catalog_lineages l where l.host_id = h.id and l.snapshot_id is not null)
         order by h.name, h.id limit 200`,
  );
  return { hits: rows.slice(0, limit).map(hitOf), more: rows.length > limit, notCatalogued };
}
