/**
 * @module hosts/host-push
 * What the server pushes to an agent about its host: credentials, host-wide caps and the schedule
 * set. The hello uses all of it in one fixed order (packages/protocol/PROTOCOL.md, "On hello");
 * routes use the single pushes after an edit.
 */
import { type Database, hosts, scheduleSourceGroups, schedules } from "@fleetback/db";
import type { Caps, CredentialSlot, Repository, ScheduleSet } from "@fleetback/protocol";
import { asc, eq } from "drizzle-orm";
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

/**
 * The host's schedules (enabled and disabled: the agent skips disabled ones itself; all disabled
 * while the host's schedules are paused) with their member groups, under the version the host row
 * holds. One repeatable-read snapshot, so the
 * version always describes exactly the list sent with it. Undefined when the host is gone.
 */
export async function loadScheduleSet(db: Database, hostId: string): Promise<ScheduleSet | undefined> {
  return db.transaction(
    async (tx) => {
      const [host] = await tx
        .select({ version: hosts.scheduleVersion, paused: hosts.schedulesPaused })
        .from(hosts)
        .where(eq(hosts.id, hostId));
      if (!host) {
        return undefined;
      }
      const rows = await tx
        .select({ id: schedules.id, cron: schedules.cron, enabled: schedules.enabled })
        .from(schedules)
        .where(eq(schedules.hostId, hostId))
        .orderBy(asc(schedules.createdAt), asc(schedules.id));
      const members = await tx
        .select({ scheduleId: scheduleSourceGroups.scheduleId, groupId: scheduleSourceGroups.sourceGroupId })
        .from(scheduleSourceGroups)
        .innerJoin(schedules, eq(schedules.id, scheduleSourceGroups.scheduleId))
        .where(eq(schedules.hostId, hostId))
        .orderBy(asc(scheduleSourceGroups.sourceGroupId));
      const groupsOf = new Map<string, string[]>();
      for (const member of members) {
        groupsOf.set(member.scheduleId, [...(groupsOf.get(member.scheduleId) ?? []), member.groupId]);
      }
      return {
        version: host.version,
        schedules: rows.map((row) => ({
          ...row,
          enabled: row.enabled && !host.paused,
          source_groups: groupsOf.get(row.id) ?? [],
        })),
      };
    },
    { isolationLevel: "repeatable read", accessMode: "read only" },
  );
}

/** Everything the hello pushes; undefined when the host row is gone. */
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
    })
    .from(hosts)
    .where(eq(hosts.id, hostId));
  const schedule = await loadScheduleSet(deps.db, hostId);
  if (!host || !schedule) {
    return undefined;
  }
  const credentials = await readHostCredentials(deps, hostId);
  return { credentials, caps: capsOf(host), schedule, update: host.update, keeperHostId: host.keeperHostId };
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
