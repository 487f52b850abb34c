/**
 * @module dashboard/dashboard-view
 * Everything the fleet dashboard (`/`) and `GET /api/dashboard` show, read at one instant: hosts
 * by state, the groups that need attention first, the last 24 h of jobs, the repositories' growth
 * and the newest open alerts. The page and the JSON answer from this one object, so their numbers
 * agree.
 */
import { alerts } from "@fleetback/db";
import { count, isNull } from "drizzle-orm";
import { type AlertRow, alertJson, listAlerts } from "../alerts/alerts.js";
import type { ServerDeps } from "../deps.js";
import type { FreshnessState, GroupFreshness } from "../freshness/freshness.js";
import { countHostStates, type HostStateCounts, loadHostProblems } from "../freshness/host-states.js";
import { isUnprotected, type Protection, type UnprotectedReason } from "../freshness/protection.js";
import { listFleet } from "../hosts/fleet-view.js";
import { type ProtectionCounts, protectionCounts } from "../keepers/protection-view.js";
import {
  fleetRepositoryGrowth,
  type GrowthPoint,
  type RepositoryGrowth,
} from "../maintenance/repository-growth.js";
import { type JobTimeline, loadJobTimeline } from "./job-timeline.js";

/** Attention rows on the page; the rest are one link away on the filtered host list. */
export const ATTENTION_LIMIT = 20;
export const DASHBOARD_ALERTS = 5;

export interface AttentionRow extends GroupFreshness {
  /** Seconds since the group's last snapshot; null when it has none. */
  lastSnapshotAgeSeconds: number | null;
}

export interface Dashboard {
  now: Date;
  hosts: HostStateCounts;
  groups: Record<FreshnessState, number>;
  /** Overdue groups (oldest last snapshot first), then due ones; at most ATTENTION_LIMIT. */
  attention: AttentionRow[];
  /** Overdue and due groups in all, of which `attention` shows the first. */
  attentionTotal: number;
  timeline: JobTimeline;
  growth: RepositoryGrowth;
  alerts: AlertRow[];
  openAlerts: number;
  /** Hosts unprotected (freshness/protection.ts), by reason; the total is hosts.unprotected. */
  unprotected: Record<UnprotectedReason, number>;
  /** Deletion protection (keepers/): the fleet's exposure as one number. */
  protection: ProtectionCounts;
}

function groupCounts(groups: readonly GroupFreshness[]): Record<FreshnessState, number> {
  const counts: Record<FreshnessState, number> = { overdue: 0, due: 0, never: 0, fresh: 0, unscheduled: 0 };
  for (const group of groups) {
    counts[group.state] += 1;
  }
  return counts;
}

function unprotectedCounts(
  fleet: ReadonlyArray<{ id: string }>,
  protection: ReadonlyMap<string, Protection>,
): Record<UnprotectedReason, number> {
  const counts: Record<UnprotectedReason, number> = {
    no_repository: 0,
    no_group: 0,
    unscheduled: 0,
    never: 0,
  };
  for (const host of fleet) {
    const verdict = protection.get(host.id);
    if (verdict !== undefined && isUnprotected(verdict)) {
      counts[verdict] += 1;
    }
  }
  return counts;
}

export async function loadDashboard(deps: Pick<ServerDeps, "db" | "config" | "clock">): Promise<Dashboard> {
  const now = deps.clock.now();
  const { groups, problems } = await loadHostProblems(deps, now);
  const [fleet, timeline, growth, newest, [open], protection] = await Promise.all([
    listFleet(deps.db),
    loadJobTimeline(deps.db, now, problems),
    fleetRepositoryGrowth(deps.db, now),
    listAlerts(deps.db, { state: "open", limit: DASHBOARD_ALERTS }),
    deps.db.select({ n: count() }).from(alerts).where(isNull(alerts.resolvedAt)),
    protectionCounts(deps.db),
  ]);
  // evaluateFreshness sorts overdue (oldest last snapshot first), due, never, fresh, unscheduled.
  const needing = groups.filter((group) => group.state === "overdue" || group.state === "due");
  return {
    now,
    hosts: countHostStates(fleet, problems),
    groups: groupCounts(groups),
    unprotected: unprotectedCounts(fleet, problems.protection),
    attention: needing.slice(0, ATTENTION_LIMIT).map((group) => ({
      ...group,
      lastSnapshotAgeSeconds: group.lastSnapshotAt
        ? Math.max(0, Math.round((now.getTime() - group.lastSnapshotAt.getTime()) / 1000))
        : null,
    })),
    attentionTotal: needing.length,
    timeline,
    growth,
    alerts: newest,
    openAlerts: Number(open?.n ?? 0),
    protection,
  };
}

const iso = (at: Date | null) => (at ? at.toISOString() : null);

/** GET /api/dashboard: the page's numbers for scripts, in the API's snake_case. */
export function dashboardJson(dashboard: Dashboard) {
  const jobs: Record<string, number> = {};
  for (const host of dashboard.timeline.hosts) {
    for (const job of host.jobs) {
      jobs[job.status] = (jobs[job.status] ?? 0) + 1;
    }
  }
  return {
    generated_at: dashboard.now.toISOString(),
    hosts: dashboard.hosts,
    deletion_protection: dashboard.protection,
    groups: dashboard.groups,
    unprotected: dashboard.unprotected,
    attention: dashboard.attention.map((row) => ({
      host_id: row.hostId,
      host_name: row.hostName,
      group_id: row.groupId,
      group_name: row.groupName,
      state: row.state,
      last_snapshot_at: iso(row.lastSnapshotAt),
      last_snapshot_age_seconds: row.lastSnapshotAgeSeconds,
      next_fire_at: iso(row.nextFireAt),
      due_at: iso(row.dueAt),
      deadline: iso(row.deadline),
      overdue_seconds: row.overdueSeconds,
      time_zone: row.timeZone,
    })),
    attention_total: dashboard.attentionTotal,
    jobs_24h: {
      from: dashboard.timeline.from.toISOString(),
      to: dashboard.timeline.to.toISOString(),
      hosts_shown: dashboard.timeline.hosts.length,
      by_status: jobs,
    },
    repository: {
      stored_bytes: dashboard.growth.storedBytes,
      hosts_reporting: dashboard.growth.hostsReporting,
      daily: dashboard.growth.days.map((point) => ({
        day: point.day,
        stored_bytes: figureOf(point, dashboard.growth.firstDay),
      })),
    },
    open_alerts: dashboard.openAlerts,
    newest_alerts: dashboard.alerts.map(alertJson),
  };
}

/** A day before the first report has no figure: null, since 0 would read as an empty fleet. */
function figureOf(point: GrowthPoint, firstDay: string | null): number | null {
  return firstDay !== null && point.day >= firstDay ? point.storedBytes : null;
}
