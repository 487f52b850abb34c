/**
 * @module hosts/fleet-view
 * The fleet overview: every host with its status, versions and how far a requested agent update
 * got, how many alerts it has open and its repository's last check, in one query whatever the
 * fleet size.
 */
import {
  alerts,
  type CheckStatus,
  type Database,
  type HostAgentKind,
  hosts,
  repoStats,
  type UpdateState,
} from "@fleetback/db";
import { and, asc, eq, isNull, sql } from "drizzle-orm";

export interface FleetRow {
  id: string;
  name: string;
  os: string;
  arch: string;
  status: "online" | "offline";
  lastSeenAt: Date | null;
  agentVersion: string;
  toolVersion: string;
  protocolVersion: number | null;
  agentKind: HostAgentKind;
  updateVersion: string | null;
  updateState: UpdateState | null;
  updateError: string | null;
  updateStateAt: Date | null;
  snapshotCount: number;
  openAlerts: number;
  lastCheckStatus: CheckStatus | null;
  lastCheckAt: Date | null;
}

export async function listFleet(db: Database): Promise<FleetRow[]> {
  const open = db
    .select({ hostId: alerts.hostId, n: sql<number>`count(*)::int`.as("n") })
    .from(alerts)
    .where(isNull(alerts.resolvedAt))
    .groupBy(alerts.hostId)
    .as("open_alerts");
  const rows = await db
    .select({
      id: hosts.id,
      name: hosts.name,
      os: hosts.os,
      arch: hosts.arch,
      status: hosts.status,
      lastSeenAt: hosts.lastSeenAt,
      agentVersion: hosts.agentVersion,
      toolVersion: hosts.toolVersion,
      protocolVersion: hosts.protocolVersion,
      agentKind: hosts.agentKind,
      updateVersion: hosts.updateVersion,
      updateState: hosts.updateState,
      updateError: hosts.updateError,
      updateStateAt: hosts.updateStateAt,
      snapshotCount: hosts.snapshotCount,
      openAlerts: sql<number>`coalesce(${open.n}, 0)`,
      lastCheckStatus: repoStats.lastCheckStatus,
      lastCheckAt: repoStats.lastCheckAt,
    })
    .from(hosts)
    .leftJoin(open, and(eq(open.hostId, hosts.id)))
    .leftJoin(repoStats, eq(repoStats.hostId, hosts.id))
    .orderBy(asc(hosts.name), asc(hosts.id));
  return rows.map((row) => ({ ...row, openAlerts: Number(row.openAlerts) }));
}

export function fleetRowJson(row: FleetRow) {
  return {
    id: row.id,
    name: row.name,
    os: row.os,
    arch: row.arch,
    status: row.status,
    last_seen_at: row.lastSeenAt,
    agent_version: row.agentVersion,
    tool_version: row.toolVersion,
    protocol_version: row.protocolVersion,
    agent_kind: row.agentKind,
    update: updateJson(row),
    snapshot_count: row.snapshotCount,
    open_alerts: row.openAlerts,
    last_check_status: row.lastCheckStatus,
    last_check_at: row.lastCheckAt,
  };
}

/** The host's last requested agent update, or null when none was asked for. */
export function updateJson(row: {
  updateVersion: string | null;
  updateState: UpdateState | null;
  updateError: string | null;
  updateStateAt: Date | null;
}) {
  if (row.updateVersion === null || row.updateState === null) {
    return null;
  }
  return {
    version: row.updateVersion,
    state: row.updateState,
    error: row.updateError,
    state_at: row.updateStateAt,
  };
}
