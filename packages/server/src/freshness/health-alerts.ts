/**
 * @module freshness/health-alerts
 * The silent failures, as alerts: every FLEETBACK_HEALTH_INTERVAL (60 s) one replica (advisory lock)
 * compares what should be open with what is:
 *   backup_overdue (host, group)  a scheduled group past its deadline (freshness/freshness.ts);
 *   agent_offline  (host)         offline longer than FLEETBACK_AGENT_OFFLINE_ALERT_AFTER;
 *   check_overdue  (host)         checks enabled, and no successful check within twice the check
 *                                 cadence (read in FLEETBACK_TZ, as the maintenance ticker does).
 * Only differences are written: opening a missing alert and resolving one whose condition ended
 * (including a group deleted or no longer scheduled, a host back online, checks disabled). The
 * whole fleet costs three reads per tick, whatever its size; open alerts are not re-touched.
 * Notifications go out after the commit, so a rolled-back tick notifies nothing.
 */
import {
  type Alert,
  alerts,
  type Database,
  hosts,
  maintenance,
  repoStats,
  withAdvisoryLock,
} from "@fleetback/db";
import { and, eq, inArray, isNull, sql } from "drizzle-orm";
import { type AlertKey, type AlertKind, raiseAlert, resolveKey } from "../alerts/alerts.js";
import type { ServerDeps } from "../deps.js";
import type { AlertContext } from "../notifications/message.js";
import { type CronTimes, createCronTimes, intervalEndingAt } from "./cron-times.js";
import { evaluateFreshness, type GroupFreshness } from "./freshness.js";

export const HEALTH_ALERT_KINDS = [
  "backup_overdue",
  "agent_offline",
  "check_overdue",
] as const satisfies readonly AlertKind[];

type HealthDeps = Pick<ServerDeps, "db" | "ids" | "log" | "notifier"> & {
  config: { timeZone: string; agentOfflineAlertAfterMs: number | null };
};

interface Wanted {
  key: AlertKey;
  message: string;
  context: AlertContext;
}

interface Notice {
  event: "opened" | "resolved";
  alert: Alert;
  context: AlertContext;
}

export interface HealthTickReport {
  ran: boolean;
  opened: Array<{ hostId: string; kind: AlertKind; dedupKey: string }>;
  resolved: Array<{ hostId: string; kind: AlertKind; dedupKey: string }>;
}

function keyId(key: AlertKey): string {
  return `${key.hostId}\u0000${key.kind}\u0000${key.dedupKey}`;
}

function iso(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, "Z");
}

function overdueAlerts(groups: readonly GroupFreshness[]): Wanted[] {
  return groups
    .filter((group) => group.state === "overdue")
    .map((group) => ({
      key: { hostId: group.hostId, kind: "backup_overdue", dedupKey: group.groupId },
      message: group.lastSnapshotAt
        ? `No snapshot of ${group.groupName} since ${iso(group.lastSnapshotAt)}; it was due by ${iso(group.deadline ?? group.lastSnapshotAt)}`
        : `No snapshot of ${group.groupName} yet; the first was due by ${iso(group.deadline ?? new Date(0))}`,
      context: { hostName: group.hostName, sourceGroupName: group.groupName },
    }));
}

async function offlineAlerts(db: Database, now: Date, afterMs: number | null): Promise<Wanted[]> {
  if (afterMs === null) {
    return [];
  }
  const cutoff = new Date(now.getTime() - afterMs);
  const rows = await db
    .select({ id: hosts.id, name: hosts.name, lastSeenAt: hosts.lastSeenAt, createdAt: hosts.createdAt })
    .from(hosts)
    .where(
      and(
        eq(hosts.status, "offline"),
        sql`coalesce(${hosts.lastSeenAt}, ${hosts.createdAt}) <= ${cutoff.toISOString()}::timestamptz`,
      ),
    );
  return rows.map((row) => ({
    key: { hostId: row.id, kind: "agent_offline", dedupKey: "" },
    message: row.lastSeenAt
      ? `The agent of ${row.name} has been offline since ${iso(row.lastSeenAt)}`
      : `The agent of ${row.name} has not connected since the host was enrolled (${iso(row.createdAt)})`,
    context: { hostName: row.name },
  }));
}

async function checkAlerts(db: Database, now: Date, zone: string, times: CronTimes): Promise<Wanted[]> {
  const rows = await db
    .select({
      hostId: maintenance.hostId,
      hostName: hosts.name,
      cron: maintenance.checkCron,
      since: maintenance.createdAt,
      lastOkAt: repoStats.lastCheckOkAt,
    })
    .from(maintenance)
    .innerJoin(hosts, eq(hosts.id, maintenance.hostId))
    .leftJoin(repoStats, eq(repoStats.hostId, maintenance.hostId))
    .where(eq(maintenance.checkEnabled, true));
  const wanted: Wanted[] = [];
  for (const row of rows) {
    const base = row.lastOkAt ?? row.since;
    const first = times.nextAfter(row.cron, zone, base);
    const cadence = first ? intervalEndingAt(times, row.cron, zone, first) : undefined;
    if (cadence === undefined || now.getTime() - base.getTime() <= 2 * cadence) {
      continue;
    }
    wanted.push({
      key: { hostId: row.hostId, kind: "check_overdue", dedupKey: "" },
      message: row.lastOkAt
        ? `No successful repository check of ${row.hostName} since ${iso(row.lastOkAt)} (checks run on "${row.cron}")`
        : `No successful repository check of ${row.hostName} yet (checks run on "${row.cron}")`,
      context: { hostName: row.hostName },
    });
  }
  return wanted;
}

const RESOLVED_BECAUSE: Record<(typeof HEALTH_ALERT_KINDS)[number], string> = {
  backup_overdue: "Resolved: a new snapshot arrived, or the group is no longer scheduled.",
  agent_offline: "Resolved: the agent is connected again.",
  check_overdue: "Resolved: a repository check succeeded, or checks were turned off.",
};

async function contextsOf(db: Database, open: readonly Alert[]): Promise<Map<string, AlertContext>> {
  const hostIds = [...new Set(open.map((alert) => alert.hostId))];
  const names = new Map<string, string>();
  if (hostIds.length > 0) {
    for (const row of await db
      .select({ id: hosts.id, name: hosts.name })
      .from(hosts)
      .where(inArray(hosts.id, hostIds))) {
      names.set(row.id, row.name);
    }
  }
  return new Map(
    open.map((alert) => [
      alert.id,
      {
        hostName: names.get(alert.hostId) ?? alert.hostId,
        resolvedBecause: RESOLVED_BECAUSE[alert.kind as (typeof HEALTH_ALERT_KINDS)[number]],
      },
    ]),
  );
}

function notify(deps: Pick<ServerDeps, "log" | "notifier">, notices: readonly Notice[]): void {
  for (const { event, alert, context } of notices) {
    const fields = { alert_id: alert.id, host_id: alert.hostId, kind: alert.kind };
    if (event === "opened") {
      deps.log.warn(fields, "alert opened");
      deps.notifier.alertOpened(alert, context);
    } else {
      deps.log.info(fields, "alert resolved");
      deps.notifier.alertResolved(alert, context);
    }
  }
}

/** One evaluation; `times` is reused across ticks so expressions are parsed once. */
export async function healthTick(
  deps: HealthDeps,
  now: Date,
  times: CronTimes = createCronTimes(),
): Promise<HealthTickReport> {
  const report: HealthTickReport = { ran: false, opened: [], resolved: [] };
  const outcome = await withAdvisoryLock(deps.db, "health-ticker", async (tx) => {
    const groups = await evaluateFreshness(tx, now, {
      defaultTimeZone: deps.config.timeZone,
      cronTimes: times,
    });
    const wanted = [
      ...overdueAlerts(groups),
      ...(await offlineAlerts(tx, now, deps.config.agentOfflineAlertAfterMs)),
      ...(await checkAlerts(tx, now, deps.config.timeZone, times)),
    ];
    const open = await tx
      .select()
      .from(alerts)
      .where(and(inArray(alerts.kind, [...HEALTH_ALERT_KINDS]), isNull(alerts.resolvedAt)));
    const openIds = new Set(open.map((alert) => keyId(alert as AlertKey)));
    const wantedIds = new Set(wanted.map((entry) => keyId(entry.key)));
    const notices: Notice[] = [];
    for (const entry of wanted) {
      if (openIds.has(keyId(entry.key))) {
        continue;
      }
      const raised = await raiseAlert({ db: tx, ids: deps.ids }, entry.key, { message: entry.message }, now);
      if (raised.opened) {
        notices.push({ event: "opened", alert: raised.alert, context: entry.context });
        report.opened.push(entry.key);
      }
    }
    const ending = open.filter((alert) => !wantedIds.has(keyId(alert as AlertKey)));
    const contexts = await contextsOf(tx, ending);
    for (const alert of ending) {
      const key = { hostId: alert.hostId, kind: alert.kind as AlertKind, dedupKey: alert.dedupKey };
      const resolved = await resolveKey(tx, key, now);
      if (resolved) {
        notices.push({
          event: "resolved",
          alert: resolved,
          context: contexts.get(alert.id) ?? { hostName: alert.hostId },
        });
        report.resolved.push(key);
      }
    }
    return notices;
  });
  if (!outcome.ran) {
    return report;
  }
  report.ran = true;
  notify(deps, outcome.result);
  return report;
}

/**
 * Resolves the host's agent_offline alert as its hello is accepted, without waiting for the next
 * tick. Never throws: an alert must not break a connection.
 */
export async function resolveAgentOffline(
  deps: Pick<ServerDeps, "db" | "log" | "notifier">,
  host: { id: string; name: string },
  now: Date,
): Promise<void> {
  try {
    const resolved = await resolveKey(deps.db, { hostId: host.id, kind: "agent_offline", dedupKey: "" }, now);
    if (resolved) {
      notify(deps, [
        {
          event: "resolved",
          alert: resolved,
          context: { hostName: host.name, resolvedBecause: RESOLVED_BECAUSE.agent_offline },
        },
      ]);
    }
  } catch (err) {
    deps.log.error({ err, host_id: host.id }, "could not resolve the agent_offline alert");
  }
}
