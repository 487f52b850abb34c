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
 * The version rows of `where` (ordered by `order`, `limit` of them from `offset`), each with the
 * range of the group's snapshots that hold it within the filters' window; versions no snapshot
 * holds are left out. The range is computed for the rows of the page only: a version no snapshot
 * holds is pruned once retention has moved past it (catalog-prune.ts), so a page is rarely short.
 */
export function versionRowsSql(
  where: SQL,
  filters: SearchFilters,
  order: { inner: SQL; outer: SQL },
  limit: number,
): SQL {
  return sql`
    select c.*, held.snapshot_count, held.first_id, held.first_time, held.last_id, held.last_time
      from (
        select h.id as host_id, h.name as host_name, l.id as lineage_id, l.host_id as lineage_host, l.tag,
               d.path as dir, v.name, v.type, v.size, v.mtime, v.from_at, v.until_at,
               v.from_at::text as from_key, v.until_at::text as until_key
          from file_versions v
          join catalog_lineages l on l.id = v.lineage_id
          join catalog_dirs d on d.lineage_id = v.lineage_id and d.id = v.dir_id
          join hosts h on h.id = l.host_id
         where ${where}
         order by ${order.inner}
         limit ${limit}
      ) c
      cross join lateral (
        select count(*) as snapshot_count,
               (array_agg(s.id order by s.time asc))[1] as first_id, min(s.time) as first_time,
               (array_agg(s.id order by s.time desc))[1] as last_id, max(s.time) as last_time
          from snapshots s
         where s.host_id = c.lineage_host and s.is_own and s.tags @> jsonb_build_array(c.tag)
           and s.time >= c.from_at and (c.until_at is null or s.time < c.until_at)${snapshotWindow(filters)}
      ) held
     where held.snapshot_count > 0
     order by ${order.outer}`;
}

/** Hosts searched a chunk at a time: a common name fills a page from the first chunk. */
const HOST_CHUNK = 16;
const ORDER = {
  inner: sql`h.name, h.id, d.path, v.name, l.tag, v.from_at desc`,
  outer: sql`host_name, host_id, dir, name, tag, from_at desc`,
};

export async function searchCatalogue(
  db: Database,
  query: CatalogQuery,
  filters: SearchFilters,
  page: { limit?: number; offset?: number } = {},
): Promise<SearchResult> {
  const limit = Math.min(page.limit ?? SEARCH_LIMIT_DEFAULT, SEARCH_LIMIT_MAX);
  let skip = page.offset ?? 0;
  const where = [nameSql(sql`v.name`, query.name)];
  if (query.dir !== undefined) {
    where.push(dirSql(sql`d.path`, query.dir));
  }
  if (filters.groups !== undefined && filters.groups.length > 0) {
    where.push(sql`l.tag = any(${sql.param([...filters.groups])}::text[])`);
  }
  const searched = await executeRows<{ id: string; name: string; catalogued: boolean }>(
    db,
    sql`select h.id, h.name,
               exists (select 1 from catalog_lineages l where l.host_id = h.id and l.snapshot_id is not null) as catalogued
          from ${hosts} h
         where ${sql.join([sql`true`, ...hostFilters(filters)], sql` and `)}
         order by h.name, h.id`,
  );
  const ids = searched.filter((host) => host.catalogued).map((host) => host.id);
  const hits: SearchHit[] = [];
  for (let at = 0; at < ids.length && hits.length <= limit; at += HOST_CHUNK) {
    const chunk = ids.slice(at, at + HOST_CHUNK);
    const want = limit + 1 - hits.length;
    const rows = await executeRows<HitRow>(
      db,
      versionRowsSql(
        sql.join([sql`h.id = any(${sql.param(chunk)}::text[])`, ...where], sql` and `),
        filters,
        ORDER,
        want + skip,
      ),
    );
    const taken = rows.slice(Math.min(skip, rows.length));
    skip -= Math.min(skip, rows.length);
    hits.push(...taken.map(hitOf));
  }
  const notCatalogued = searched.filter((host) => !host.catalogued).slice(0, 200);
  return {
    hits: hits.slice(0, limit),
    more: hits.length > limit,
    notCatalogued: notCatalogued.map((host) => ({ id: host.id, name: host.name })),
  };
}
