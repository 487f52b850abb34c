/**
 * @module alerts/alerts
 * Alerts: at most one open alert per (host, kind, dedup_key), enforced by the
 * database's partial unique index. Raising an open key again only updates last_seen_at, message
 * and the last job; two concurrent raises of a new key meet at the index and the loser becomes a
 * re-raise. Resolving touches exactly one key: other keys of the same host and kind stay open.
 */
import { type Alert, alerts, type Database, hosts, isUniqueViolation, sourceGroups } from "@fleetback/db";
import { and, desc, eq, isNotNull, isNull, lt, type SQL } from "drizzle-orm";
import { type AuditContext, writeAudit } from "../audit/audit.js";
import type { Clock } from "../clock.js";
import { conflict, notFound } from "../errors.js";
import type { Ids } from "../ids.js";

export const ALERT_KINDS = [
  "backup_failed",
  "forget_failed",
  "prune_failed",
  "check_failed",
  "restore_failed",
  "diff_failed",
  "init_failed",
  "unlock_failed",
  // A refused or rolled-back agent update (updates/update-alerts.ts).
  "agent_update_failed",
  // Fleet health (freshness/health-alerts.ts): judged from snapshots and presence, not from job ends.
  "backup_overdue",
  "agent_offline",
  "check_overdue",
  // A restore drill that failed (maintenance drills).
  "restore_drill_failed",
  // A copy to the host's mirror repository that failed (mirror/mirror-copy.ts).
  "mirror_failed",
  // The host's repository did not answer (alerts/repository-alerts.ts): open until a job reaches it.
  "repository_unreachable",
  // A snapshot whose claimed time is far from when the server first saw it (back-dated with
  // restic backup --time, or dated in the future): retention leaves it out (retention/).
  "snapshot_time_suspect",
  // Deletion holds (holds/): open while the host's hold of that kind is, resolved on its release.
  "backup_anomaly",
  "forget_plan_held",
] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];

export interface AlertKey {
  hostId: string;
  kind: AlertKind;
  /** The source group id for backup_failed and backup_overdue; empty for host-scoped kinds. */
  dedupKey: string;
}

export type RaiseOutcome = { alert: Alert; opened: boolean };

function openKey(key: AlertKey): SQL | undefined {
  return and(
    eq(alerts.hostId, key.hostId),
    eq(alerts.kind, key.kind),
    eq(alerts.dedupKey, key.dedupKey),
    isNull(alerts.resolvedAt),
  );
}

async function touch(
  db: Database,
  key: AlertKey,
  message: string,
  jobId: string | null,
  now: Date,
): Promise<Alert | undefined> {
  const [row] = await db
    .update(alerts)
    .set({ lastSeenAt: now, message, lastJobId: jobId })
    .where(openKey(key))
    .returning();
  return row;
}

/** Opens the key's alert, or re-raises the open one. `opened` says whether to notify. */
export async function raiseAlert(
  deps: { db: Database; ids: Ids },
  key: AlertKey,
  details: { message: string; jobId?: string | null },
  now: Date,
): Promise<RaiseOutcome> {
  const message = details.message.slice(0, 2_000);
  const jobId = details.jobId ?? null;
  const db = deps.db;
  const existing = await touch(db, key, message, jobId, now);
  if (existing) {
    return { alert: existing, opened: false };
  }
  try {
    const [created] = await db
      .insert(alerts)
      .values({ id: deps.ids.ulid(now), ...key, message, lastJobId: jobId, createdAt: now, lastSeenAt: now })
      .returning();
    if (!created) {
      throw new Error("insert into alerts returned no row");
    }
    return { alert: created, opened: true };
  } catch (err) {
    if (!isUniqueViolation(err, "alerts_open_key")) {
      throw err;
    }
    const raced = await touch(db, key, message, jobId, now);
    if (!raced) {
      throw err;
    }
    return { alert: raced, opened: false };
  }
}

/** Resolves the key's open alert after a success of the same kind; returns it if there was one. */
export async function resolveKey(db: Database, key: AlertKey, now: Date): Promise<Alert | undefined> {
  const [row] = await db.update(alerts).set({ resolvedAt: now }).where(openKey(key)).returning();
  return row;
}

/** An operator's manual resolve. */
export async function resolveAlertById(
  deps: { db: Database; clock: Clock; ids: Ids },
  audit: AuditContext,
  alertId: string,
): Promise<Alert> {
  return deps.db.transaction(async (tx) => {
    const [row] = await tx
      .update(alerts)
      .set({ resolvedAt: deps.clock.now(), resolvedBy: audit.actor.userId })
      .where(and(eq(alerts.id, alertId), isNull(alerts.resolvedAt)))
      .returning();
    if (!row) {
      const [exists] = await tx.select({ id: alerts.id }).from(alerts).where(eq(alerts.id, alertId));
      throw exists ? conflict(`Alert ${alertId} is already resolved`) : notFound(`No alert ${alertId}`);
    }
    await writeAudit(tx, deps, {
      ...audit,
      action: "alert.resolve",
      targetKind: "alert",
      targetId: row.id,
      details: { host_id: row.hostId, kind: row.kind },
    });
    return row;
  });
}

export type AlertState = "open" | "resolved" | "all";

export interface AlertRow extends Alert {
  hostName: string;
  /** The source group a group-scoped alert (backup_failed, backup_overdue) is about, while it exists. */
  groupName: string | null;
}

export async function listAlerts(
  db: Database,
  filter: { state: AlertState; hostId?: string | undefined; before?: string | undefined; limit: number },
): Promise<AlertRow[]> {
  const conditions: Array<SQL | undefined> = [];
  if (filter.state === "open") {
    conditions.push(isNull(alerts.resolvedAt));
  } else if (filter.state === "resolved") {
    conditions.push(isNotNull(alerts.resolvedAt));
  }
  if (filter.hostId) {
    conditions.push(eq(alerts.hostId, filter.hostId));
  }
  if (filter.before) {
    conditions.push(lt(alerts.id, filter.before));
  }
  const rows = await db
    .select({ alert: alerts, hostName: hosts.name, groupName: sourceGroups.name })
    .from(alerts)
    .innerJoin(hosts, eq(hosts.id, alerts.hostId))
    // dedup_key holds the group id for group-scoped kinds and "" (matching no group) otherwise.
    .leftJoin(sourceGroups, and(eq(sourceGroups.id, alerts.dedupKey), eq(sourceGroups.hostId, alerts.hostId)))
    .where(and(...conditions))
    .orderBy(desc(alerts.id))
    .limit(filter.limit);
  return rows.map((row) => ({ ...row.alert, hostName: row.hostName, groupName: row.groupName }));
}

export function alertJson(alert: AlertRow) {
  return {
    id: alert.id,
    host_id: alert.hostId,
    host_name: alert.hostName,
    group_name: alert.groupName,
    kind: alert.kind,
    dedup_key: alert.dedupKey,
    message: alert.message,
    last_job_id: alert.lastJobId,
    created_at: alert.createdAt,
    last_seen_at: alert.lastSeenAt,
    resolved_at: alert.resolvedAt,
    resolved_by: alert.resolvedBy,
    state: alert.resolvedAt ? "resolved" : "open",
  };
}
