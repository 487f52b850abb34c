/**
 * @module freshness/host-states
 * The host states the dashboard counts and the host list filters by. online and offline are
 * the connection; overdue, failing and unprotected are problems a host has whatever its
 * connection: overdue when at least one of its source groups is overdue (freshness/freshness.ts),
 * failing when it has an open `*_failed` or `repository_unreachable` alert, unprotected when it
 * has no repository, no group, an unscheduled group or one never backed up (freshness/protection.ts). The dashboard's numbers and `/hosts?state=`
 * (fleet/fleet-list.ts) share this one definition, so a number and the list it links to always
 * agree.
 */
import { alerts, type Database, executeRows } from "@fleetback/db";
import { and, eq, isNull, like, or, sql } from "drizzle-orm";
import type { ServerDeps } from "../deps.js";
import type { FleetRow } from "../hosts/fleet-view.js";
import { evaluateFreshness, type FreshnessState, type GroupFreshness } from "./freshness.js";
import { hostProtection, isUnprotected, type Protection } from "./protection.js";

export const HOST_STATES = ["online", "offline", "overdue", "failing", "unprotected"] as const;
export type HostState = (typeof HOST_STATES)[number];

export interface HostProblems {
  overdue: ReadonlySet<string>;
  failing: ReadonlySet<string>;
  /** Every host's protection verdict; unprotected hosts are those isUnprotected says. */
  protection: ReadonlyMap<string, Protection>;
}

/**
 * Hosts with an open alert of a failed job kind (backup_failed, check_failed, ...), or whose
 * repository does not answer: every job of such a host fails until it does.
 */
export async function failingHostIds(db: Database): Promise<Set<string>> {
  const rows = await db
    .selectDistinct({ hostId: alerts.hostId })
    .from(alerts)
    .where(
      and(
        isNull(alerts.resolvedAt),
        or(like(alerts.kind, "%\\_failed"), eq(alerts.kind, "repository_unreachable")),
      ),
    );
  return new Set(rows.map((row) => row.hostId));
}

export function overdueHostIds(groups: readonly GroupFreshness[]): Set<string> {
  return new Set(groups.filter((group) => group.state === "overdue").map((group) => group.hostId));
}

export function isInState(
  host: Pick<FleetRow, "id" | "status">,
  state: HostState,
  problems: HostProblems,
): boolean {
  switch (state) {
    case "online":
    case "offline":
      return host.status === state;
    case "overdue":
      return problems.overdue.has(host.id);
    case "failing":
      return problems.failing.has(host.id);
    case "unprotected": {
      const protection = problems.protection.get(host.id);
      return protection !== undefined && isUnprotected(protection);
    }
  }
}

export type HostStateCounts = Record<HostState, number> & { total: number };

export function countHostStates(
  hosts: readonly Pick<FleetRow, "id" | "status">[],
  problems: HostProblems,
): HostStateCounts {
  const counts: HostStateCounts = {
    total: hosts.length,
    online: 0,
    offline: 0,
    overdue: 0,
    failing: 0,
    unprotected: 0,
  };
  for (const host of hosts) {
    for (const state of HOST_STATES) {
      if (isInState(host, state, problems)) {
        counts[state] += 1;
      }
    }
  }
  return counts;
}

/** Every group's freshness and the problem sets derived from it, at `now`. */
export async function loadHostProblems(
  deps: Pick<ServerDeps, "db" | "config">,
  now: Date,
): Promise<{ groups: GroupFreshness[]; problems: HostProblems }> {
  const [groups, failing, repositories] = await Promise.all([
    evaluateFreshness(deps.db, now, { defaultTimeZone: deps.config.timeZone }),
    failingHostIds(deps.db),
    executeRows<{ id: string; has_repository: boolean }>(
      deps.db,
      sql`select h.id, (c.repo_sealed is not null) as has_repository
          from hosts h left join host_credentials c on c.host_id = h.id`,
    ),
  ]);
  return {
    groups,
    problems: {
      overdue: overdueHostIds(groups),
      failing,
      protection: protectionByHost(repositories, groups),
    },
  };
}

function protectionByHost(
  hosts: ReadonlyArray<{ id: string; has_repository: boolean | null }>,
  groups: readonly GroupFreshness[],
): Map<string, Protection> {
  const states = new Map<string, FreshnessState[]>();
  for (const group of groups) {
    const list = states.get(group.hostId) ?? [];
    list.push(group.state);
    states.set(group.hostId, list);
  }
  return new Map(
    hosts.map((host) => [
      host.id,
      hostProtection({ hasRepository: host.has_repository === true, groupStates: states.get(host.id) ?? [] }),
    ]),
  );
}
