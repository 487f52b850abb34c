/**
 * @module hosts/host-push
 * What the server pushes to an agent about its host: credentials, host-wide caps and the schedule
 * set. The hello uses all of it in one fixed order (packages/protocol/PROTOCOL.md, "On hello");
 * routes use the single pushes after an edit.
 */
import { type Database, hosts } from "@fleetback/db";
import type { Caps, CredentialSlot, Repository, ScheduleSet } from "@fleetback/protocol";
import { eq, sql } from "drizzle-orm";
import type { ServerDeps } from "../deps.js";
import { readHostCredentials } from "./credentials.js";

export interface HostPush {
  credentials: Partial<Record<CredentialSlot, Repository>>;
  caps: Caps;
  schedule: ScheduleSet;
  /**
   * The host's agent update, read with the caps after the socket became the host's: the hello's
   * update check needs no read of its own, and a rollout started later finds the socket itself.
   */
  update: HostUpdateRow;
  /** Set: the host is protected (keepers/); its agent never holds the admin or mirror slot. */
  keeperHostId: string | null;
}

type HostRow = typeof hosts.$inferSelect;
export interface HostUpdateRow {
  version: HostRow["updateVersion"];
  state: HostRow["updateState"];
  agentKind: HostRow["agentKind"];
  os: HostRow["os"];
  arch: HostRow["arch"];
}

/** The columns a HostUpdateRow is read from. */
export const HOST_UPDATE_COLUMNS = {
  version: hosts.updateVersion,
  state: hosts.updateState,
  agentKind: hosts.agentKind,
  os: hosts.os,
  arch: hosts.arch,
};

export function capsOf(host: { bandwidthUpKbps: number | null; bandwidthDownKbps: number | null }): Caps {
  return { bandwidth_up_kbps: host.bandwidthUpKbps, bandwidth_down_kbps: host.bandwidthDownKbps };
}

interface ScheduleEntry {
  id: string;
  cron: string;
  enabled: boolean;
  source_groups: string[];
}

/**
 * The host's schedules with their member groups as one JSON value of the host row, in the order
 * the agent gets them (oldest first; groups by id). Read in the same statement as the host's
 * schedule_version, a statement being its own snapshot, so the version always describes exactly
 * the list sent with it, without a transaction (three statements fewer for every hello).
 */
// Spelled with its own aliases: drizzle writes a column of the selected table unqualified, which
// inside these subqueries would name the subquery's own column instead.
const SCHEDULE_LIST = sql<ScheduleEntry[] | string>`coalesce((
  select json_agg(json_build_object(
    'id', s.id,
    'cron', s.cron,
    'enabled', s.enabled,
    'source_groups', coalesce((
      select json_agg(m.source_group_id order by m.source_group_id)
      from schedule_source_groups as m
      where m.schedule_id = s.id
    ), '[]'::json)
  ) order by s.created_at, s.id)
  from schedules as s
  where s.host_id = "hosts"."id"
), '[]'::json)`;

const SCHEDULE_SET_COLUMNS = {
  version: hosts.scheduleVersion,
  paused: hosts.schedulesPaused,
  list: SCHEDULE_LIST,
};

/**
 * Enabled and disabled schedules alike: the agent skips disabled ones itself; all are disabled
 * while the host's schedules are paused.
 */
function scheduleSetOf(row: {
  version: number;
  paused: boolean;
  list: ScheduleEntry[] | string;
}): ScheduleSet {
  // Both drivers parse json; a driver that left it text is read the same.
  const list: ScheduleEntry[] = typeof row.list === "string" ? JSON.parse(row.list) : row.list;
  return {
    version: row.version,
    schedules: list.map((entry) => ({ ...entry, enabled: entry.enabled && !row.paused })),
  };
}

/** The host's schedule set under the version its row holds; undefined when the host is gone. */
export async function loadScheduleSet(db: Database, hostId: string): Promise<ScheduleSet | undefined> {
  const [row] = await db.select(SCHEDULE_SET_COLUMNS).from(hosts).where(eq(hosts.id, hostId));
  return row ? scheduleSetOf(row) : undefined;
}

/** Everything the hello pushes, the host row and its schedules in one read; undefined when the host row is gone. */
export async function loadHostPush(
  deps: Pick<ServerDeps, "db" | "keys" | "log">,
  hostId: string,
): Promise<HostPush | undefined> {
  const [host] = await deps.db
    .select({
      bandwidthUpKbps: hosts.bandwidthUpKbps,
      bandwidthDownKbps: hosts.bandwidthDownKbps,
      keeperHostId: hosts.keeperHostId,
      update: HOST_UPDATE_COLUMNS,
      schedule: SCHEDULE_SET_COLUMNS,
    })
    .from(hosts)
    .where(eq(hosts.id, hostId));
  if (!host) {
    return undefined;
  }
  const credentials = await readHostCredentials(deps, hostId);
  return {
    credentials,
    caps: capsOf(host),
    schedule: scheduleSetOf(host.schedule),
    update: host.update,
    keeperHostId: host.keeperHostId,
  };
}

/** Sends the host's current caps; false when the agent is not connected or the host is gone. */
export async function pushCaps(deps: Pick<ServerDeps, "db" | "hub">, hostId: string): Promise<boolean> {
  if (!deps.hub.isOnline(hostId)) {
    return false;
  }
  const [host] = await deps.db
    .select({ bandwidthUpKbps: hosts.bandwidthUpKbps, bandwidthDownKbps: hosts.bandwidthDownKbps })
    .from(hosts)
    .where(eq(hosts.id, hostId));
  return host ? deps.hub.send(hostId, "config.update", { caps: capsOf(host) }) : false;
}

/**
 * Sends the host's current schedule set. Call it after every schedule change, once the change
 * (and its schedule_version increment) has committed.
 */
export async function pushScheduleSet(
  deps: Pick<ServerDeps, "db" | "hub">,
  hostId: string,
): Promise<boolean> {
  if (!deps.hub.isOnline(hostId)) {
    return false;
  }
  const set = await loadScheduleSet(deps.db, hostId);
  return set ? deps.hub.send(hostId, "schedule.set", set) : false;
}
