/**
 * @module fleet/host-detail
 * What the host page and GET /api/hosts/{id} show: the host, whether each credential slot is
 * bound (hosts/slot-view.ts: the URL and username, never a password), and the repository's init
 * state, which is derived from the latest init job (there is no stored flag), the last restore
 * drill and the mirror's state.
 */
import {
  type Database,
  type DeletionHold,
  type Host,
  hosts,
  type Job,
  jobs,
  type RepositoryOutage,
} from "@fleetback/db";
import { and, desc, eq } from "drizzle-orm";
import { notFound } from "../errors.js";
import { holdJson, openHoldsOf } from "../holds/deletion-holds.js";
import { loadHostCredentials } from "../hosts/credentials.js";
import { updateJson } from "../hosts/fleet-view.js";
import { type HostnameChange, recentHostnameChanges } from "../hosts/host-audit.js";
import { type SlotView, slotView } from "../hosts/slot-view.js";
import { type Protection, protectionJson, protectionOf } from "../keepers/protection-view.js";
import { type LastDrill, lastDrillJson, lastDrillOf } from "../maintenance/last-drill.js";
import { type MirrorState, mirrorJson, mirrorStateOf } from "../mirror/mirror-state.js";
import { loadOutage, outageJson } from "../repository-outage/repository-outage.js";

export type InitState = "never" | "queued" | "running" | "initialised" | "failed" | "cancelled" | "lost";

export interface HostDetail {
  host: Host;
  repo: SlotView;
  admin: SlotView;
  init: { state: InitState; job: Job | undefined };
  /** Newest first: hostnames the agent reported instead of an earlier one. */
  hostnameChanges: HostnameChange[];
  lastDrill: LastDrill | undefined;
  mirror: MirrorState;
  /** The repository does not answer (repository-outage.ts); undefined while it does. */
  outage: RepositoryOutage | undefined;
  /** Its keeper, if protected, and the hosts it keeps (keepers/). */
  protection: Protection;
  /** Open deletion holds (holds/): while any stands, no forget or prune runs. */
  holds: DeletionHold[];
}

function initStateOf(job: Job | undefined): InitState {
  if (!job) {
    return "never";
  }
  return job.status === "succeeded" ? "initialised" : job.status;
}

export async function getHostDetail(db: Database, key: Uint8Array, hostId: string): Promise<HostDetail> {
  const [host] = await db.select().from(hosts).where(eq(hosts.id, hostId)).limit(1);
  if (!host) {
    throw notFound(`No host ${hostId}`);
  }
  const credentials = await loadHostCredentials(db, key, hostId);
  const [initJob] = await db
    .select()
    .from(jobs)
    .where(and(eq(jobs.hostId, hostId), eq(jobs.kind, "init")))
    .orderBy(desc(jobs.id))
    .limit(1);
  return {
    host,
    repo: slotView(credentials.repo, host.protocolVersion),
    admin: slotView(credentials.admin, host.protocolVersion),
    init: { state: initStateOf(initJob), job: initJob },
    hostnameChanges: await recentHostnameChanges(db, hostId),
    lastDrill: await lastDrillOf(db, hostId),
    mirror: await mirrorStateOf(
      db,
      hostId,
      slotView(credentials.mirror, host.protocolVersion),
      host.protocolVersion,
    ),
    outage: await loadOutage(db, hostId),
    protection: await protectionOf(db, hostId),
    holds: await openHoldsOf(db, hostId),
  };
}

export function hostDetailJson(detail: HostDetail, online: boolean) {
  const { host } = detail;
  return {
    id: host.id,
    name: host.name,
    reported_hostname: host.reportedHostname,
    hostname_changes: detail.hostnameChanges,
    os: host.os,
    arch: host.arch,
    agent_version: host.agentVersion,
    tool_version: host.toolVersion,
    protocol_version: host.protocolVersion,
    agent_kind: host.agentKind,
    update:
      host.updateVersion === null ? null : { ...updateJson(host), requested_at: host.updateRequestedAt },
    refused_hello:
      host.refusedProtocolVersion === null
        ? null
        : { protocol_version: host.refusedProtocolVersion, at: host.refusedAt },
    status: host.status,
    connected: online,
    last_seen_at: host.lastSeenAt,
    snapshot_count: host.snapshotCount,
    other_snapshot_count: host.otherSnapshotCount,
    restic_host: host.resticHost,
    snapshot_hostnames: host.snapshotHostnames,
    bandwidth_up_kbps: host.bandwidthUpKbps,
    bandwidth_down_kbps: host.bandwidthDownKbps,
    schedule_version: host.scheduleVersion,
    schedule_acked_version: host.scheduleAckedVersion,
    created_at: host.createdAt,
    repository: detail.repo,
    admin_credentials: detail.admin,
    repository_init: { state: detail.init.state, job_id: detail.init.job?.id },
    last_drill: lastDrillJson(detail.lastDrill),
    mirror: mirrorJson(detail.mirror),
    repository_outage: outageJson(detail.outage),
    deletion_protection: protectionJson(detail.protection),
    deletion_holds: detail.holds.map(holdJson),
  };
}
