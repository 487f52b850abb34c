/**
 * @module fleet/fleet-list
 * One page of the host list (`/hosts`, `/partials/fleet`, `GET /api/hosts`): filtered by state
 * and a search on the host's name or its groups' names (the snapshot tags), sorted by name, last
 * snapshot or status, paged by offset. Each row says what an operator needs to trust a host: its
 * newest snapshot, its last finished job, the freshness of its backups (the worst of its source
 * groups, freshness/freshness.ts) and when its schedules fire next.
 *
 * One SQL statement reads a page whatever the fleet size: the filtered hosts are numbered with
 * their total (`count(*) over ()`), and only the page's rows get their last job, open alerts,
 * repository check and groups with schedules (lateral, each an index lookup); the groups are
 * judged in memory with the same rules as the dashboard. Sorting by last snapshot reads each
 * filtered host's newest snapshot from `snapshots_host_id_time_idx` (one index probe per host).
 * The `overdue` filter alone first judges the whole fleet's freshness (the dashboard's own query),
 * because overdue is arithmetic on schedules SQL cannot do.
 */
import {
  type CheckStatus,
  executeRows,
  type HostAgentKind,
  type JobKind,
  type JobStatus,
  type UpdateState,
} from "@fleetback/db";
import { type SQL, sql } from "drizzle-orm";
import type { ServerDeps } from "../deps.js";
import { createCronTimes } from "../freshness/cron-times.js";
import { evaluateFreshness, type FreshnessState, judgeGroup } from "../freshness/freshness.js";
import { loadHostProblems, overdueHostIds } from "../freshness/host-states.js";
import { hostProtection, isUnprotected, type Protection } from "../freshness/protection.js";
import { type FleetRow, fleetRowJson } from "../hosts/fleet-view.js";
import { type Labels, labelsOf } from "../labels/label-rules.js";
import { selectorSql } from "../labels/selector-sql.js";
import type { FleetListParams, FleetOrder, FleetSort } from "./fleet-query.js";

export interface LastJob {
  id: string;
  kind: JobKind;
  status: JobStatus;
  finishedAt: Date | null;
}

/** A host's backups as a whole: the worst state of its groups; null when it has no group. */
export type HostFreshness = FreshnessState | null;

export interface FleetListRow extends FleetRow {
  /** An open alert of a failed job (`*_failed`): the dashboard's "failing". */
  failing: boolean;
  lastSnapshotAt: Date | null;
  lastJob: LastJob | null;
  freshness: HostFreshness;
  /** Whether the host's data is protected at all (freshness/protection.ts). */
  protection: Protection;
  /** The next fire of any enabled schedule of the host's groups. */
  nextRunAt: Date | null;
  labels: Labels;
}

export interface FleetPage {
  params: FleetListParams;
  hosts: FleetListRow[];
  total: number;
  pages: number;
}

type Raw = Record<string, unknown>;

/**
 * The alert kinds of a failed job (backup_failed, check_failed, ...) and of a repository that does
 * not answer, as freshness/host-statesNone reads them.
 */
const FAILED_KIND = "%\\_failed";
const UNREACHABLE_KIND = "repository_unreachable";

const toDate = (value: unknown): Date | null =>
  value === null || value === undefined ? null : value instanceof Date ? value : new Date(String(value));

const parseJson = (value: unknown): unknown => (typeof value === "string" ? JSON.parse(value) : value);

/** Escapes LIKE's wildcards so a search for `web_1` or `50%` means those characters. */
const likePattern = (q: string) => `%${q.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;

const WORST: readonly FreshnessState[] = ["overdue", "due", "never", "fresh", "unscheduled"];

/** Kept across requests like the health ticker's: each (cron, zone) holds a bounded run of fires. */
const cronTimes = createCronTimes();

function judgeHost(
  groupsJson: unknown,
  timeZone: string,
  now: Date,
): { freshness: HostFreshness; states: FreshnessState[]; nextRunAt: Date | null } {
  const groups = (parseJson(groupsJson) ?? []) as Array<{
    grace_seconds: number | null;
    created_at: string;
    latest_at: string | null;
    schedules: Array<{ cron: string; changed_at: string }> | null;
  }>;
  let worst: number | undefined;
  let nextRunAt: Date | null = null;
  const states: FreshnessState[] = [];
  for (const group of groups) {
    const verdict = judgeGroup(
      {
        lastSnapshotAt: toDate(group.latest_at),
        groupCreatedAt: new Date(group.created_at),
        graceSeconds: group.grace_seconds,
        schedules: (group.schedules ?? []).map((s) => ({ cron: s.cron, changedAt: new Date(s.changed_at) })),
        timeZone,
      },
      now,
      cronTimes,
    );
    states.push(verdict.state);
    const rank = WORST.indexOf(verdict.state);
    worst = worst === undefined ? rank : Math.min(worst, rank);
    if (verdict.nextFireAt && (!nextRunAt || verdict.nextFireAt < nextRunAt)) {
      nextRunAt = verdict.nextFireAt;
    }
  }
  return { freshness: worst === undefined ? null : (WORST[worst] ?? null), states, nextRunAt };
}

function orderBy(sort: FleetSort, order: FleetOrder): SQL {
  const dir = order === "asc" ? sql.raw("asc") : sql.raw("desc");
  switch (sort) {
    case "name":
      return sql`name ${dir}, id ${dir}`;
    case "last_snapshot":
      // Oldest first puts the hosts with no snapshot at all at the top: they are the most exposed.
      return order === "asc"
        ? sql`last_snapshot_at asc nulls first, name asc, id asc`
        : sql`last_snapshot_at desc nulls last, name asc, id asc`;
    case "status":
      // Problems first: failing, then offline, then online; by name within each.
      return sql`status_rank ${dir}, name asc, id asc`;
  }
}

/** One page of the fleet at `now`, with the number of hosts the filter matches. */
export async function listFleetPage(
  deps: Pick<ServerDeps, "db" | "config" | "clock">,
  params: FleetListParams,
): Promise<FleetPage> {
  const now = deps.clock.now();
  // An index probe per host (alerts_open_key leads with host_id and covers only open alerts); a
  // join against the failing hosts' set let the planner pick a nested loop over the whole fleet.
  const failing = sql`exists (select 1 from alerts a where a.host_id = h.id and a.resolved_at is null and (a.kind like ${FAILED_KIND} or a.kind = ${UNREACHABLE_KIND}))`;
  const where: SQL[] = [];
  if (params.state === "online" || params.state === "offline") {
    where.push(sql`h.status = ${params.state}`);
  } else if (params.state === "failing") {
    where.push(failing);
  } else if (params.state === "overdue") {
    const groups = await evaluateFreshness(deps.db, now, {
      defaultTimeZone: deps.config.timeZone,
      cronTimes,
    });
    const ids = JSON.stringify([...overdueHostIds(groups)]);
    where.push(sql`h.id in (select jsonb_array_elements_text(${ids}::jsonb))`);
  } else if (params.state === "unprotected") {
    const { problems } = await loadHostProblems(deps, now);
    const unprotected = [...problems.protection].filter(([, verdict]) => isUnprotected(verdict));
    const ids = JSON.stringify(unprotected.map(([id]) => id));
    where.push(sql`h.id in (select jsonb_array_elements_text(${ids}::jsonb))`);
  }
  if (params.q !== "") {
    const pattern = likePattern(params.q);
    where.push(
      sql`(h.name ilike ${pattern} or exists (select 1 from source_groups sg where sg.host_id = h.id and sg.name ilike ${pattern}))`,
    );
  }
  if (params.selector.length > 0) {
    where.push(selectorSql(sql`h.labels`, params.selector));
  }
  const filter = where.length > 0 ? sql`where ${sql.join(where, sql` and `)}` : sql``;
  // Only a sort by it needs every filtered host's newest snapshot; otherwise the page's alone.
  const snapshotForAll = params.sort === "last_snapshot";
  const newest = (alias: string) =>
    sql.raw(`(select s.time from snapshots s where s.host_id = ${alias}.id order by s.time desc limit 1)`);
  const rows = await executeRows<Raw>(
    deps.db,
    sql`with flagged as (
          select h.id, h.name, h.status, ${failing} as failing from hosts h ${filter}
        ),
        filtered as (
          select id, name, status, failing,
                 case when failing then 0 when status = 'offline' then 1 else 2 end as status_rank,
                 ${snapshotForAll ? newest("flagged") : sql`null::timestamptz`} as last_snapshot_at
          from flagged
        ),
        page as (
          select filtered.*, count(*) over () as total from filtered
          order by ${orderBy(params.sort, params.order)}
          limit ${params.limit} offset ${(params.page - 1) * params.limit}
        )
        select p.id, p.name, p.status, p.failing, p.total,
               ${snapshotForAll ? sql`p.last_snapshot_at` : newest("p")} as last_snapshot_at,
               h.os, h.arch, h.last_seen_at, h.agent_version, h.tool_version, h.protocol_version,
               h.agent_kind, h.update_version, h.update_state, h.update_error, h.update_state_at,
               h.snapshot_count, h.time_zone, h.labels, rs.last_check_status, rs.last_check_at,
               exists (select 1 from host_credentials c where c.host_id = p.id and c.repo_sealed is not null) as has_repository,
               (select count(*)::int from alerts a where a.host_id = p.id and a.resolved_at is null) as open_alerts,
               j.id as job_id, j.kind as job_kind, j.status as job_status, j.finished_at as job_finished_at,
               (select json_agg(json_build_object(
                   'grace_seconds', g.grace_seconds, 'created_at', g.created_at, 'latest_at', t.latest_at,
                   'schedules', (select json_agg(json_build_object('cron', s.cron, 'changed_at', s.updated_at))
                                 from schedule_source_groups m join schedules s on s.id = m.schedule_id
                                 where m.source_group_id = g.id and s.enabled and not h.schedules_paused)))
                from source_groups g
                left join snapshot_tags t on t.host_id = g.host_id and t.tag = g.name
                where g.host_id = p.id) as groups
        from page p
        join hosts h on h.id = p.id
        left join repo_stats rs on rs.host_id = p.id
        left join lateral (
          select j.id, j.kind, j.status, j.finished_at from jobs j
          where j.host_id = p.id and j.status in ('succeeded', 'failed', 'cancelled', 'lost')
          order by j.created_at desc limit 1
        ) j on true
        order by ${orderBy(params.sort, params.order)}`,
  );
  let total = Number(rows[0]?.total ?? 0);
  if (rows.length === 0 && params.page > 1) {
    // Past the last page: the window counted nothing, so count apart (a bookmark gone stale).
    const [counted] = await executeRows<Raw>(deps.db, sql`select count(*)::int as n from hosts h ${filter}`);
    total = Number(counted?.n ?? 0);
  }
  const hosts = rows.map((row): FleetListRow => {
    const judged = judgeHost(row.groups, (row.time_zone as string | null) ?? deps.config.timeZone, now);
    return {
      id: row.id as string,
      name: row.name as string,
      os: row.os as string,
      arch: row.arch as string,
      status: row.status as FleetRow["status"],
      lastSeenAt: toDate(row.last_seen_at),
      agentVersion: row.agent_version as string,
      toolVersion: row.tool_version as string,
      protocolVersion: row.protocol_version as number | null,
      agentKind: row.agent_kind as HostAgentKind,
      updateVersion: row.update_version as string | null,
      updateState: row.update_state as UpdateState | null,
      updateError: row.update_error as string | null,
      updateStateAt: toDate(row.update_state_at),
      snapshotCount: Number(row.snapshot_count),
      openAlerts: Number(row.open_alerts),
      lastCheckStatus: row.last_check_status as CheckStatus | null,
      lastCheckAt: toDate(row.last_check_at),
      failing: row.failing === true,
      lastSnapshotAt: toDate(row.last_snapshot_at),
      lastJob:
        row.job_id === null || row.job_id === undefined
          ? null
          : {
              id: row.job_id as string,
              kind: row.job_kind as JobKind,
              status: row.job_status as JobStatus,
              finishedAt: toDate(row.job_finished_at),
            },
      freshness: judged.freshness,
      protection: hostProtection({ hasRepository: row.has_repository === true, groupStates: judged.states }),
      nextRunAt: judged.nextRunAt,
      labels: labelsOf(parseJson(row.labels)),
    };
  });
  return { params, hosts, total, pages: Math.max(1, Math.ceil(total / params.limit)) };
}

/** `GET /api/hosts`'s row: the fleet view's fields and what the list adds. */
export function fleetListRowJson(row: FleetListRow) {
  return {
    ...fleetRowJson(row),
    failing: row.failing,
    last_snapshot_at: row.lastSnapshotAt,
    last_job: row.lastJob
      ? {
          id: row.lastJob.id,
          kind: row.lastJob.kind,
          status: row.lastJob.status,
          finished_at: row.lastJob.finishedAt,
        }
      : null,
    freshness: row.freshness,
    protection: row.protection,
    next_run_at: row.nextRunAt,
    labels: row.labels,
  };
}

export function fleetPageJson(page: FleetPage) {
  const { params } = page;
  return {
    hosts: page.hosts.map(fleetListRowJson),
    total: page.total,
    page: params.page,
    pages: page.pages,
    limit: params.limit,
    sort: params.sort,
    order: params.order,
    state: params.state ?? null,
    q: params.q,
    selector: params.selectorText,
  };
}
