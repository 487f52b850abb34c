/**
 * @module health/host-states
 * The four host states the dashboard counts and the host list filters by. online and offline are
 * the connection; overdue and failing are problems a host has whatever its connection: overdue
 * when at least one of its source groups is overdue (health/freshness.ts), failing when it has an
 * open `*_failed` alert. The dashboard's numbers and `/hosts?state=` share this one definition,
 * so a number and the list it links to always agree.
 */
import { alerts, type Database } from "@fleetback/db";
import { and, isNull, like } from "drizzle-orm";
import { type Static, Type } from "typebox";
import type { ServerDeps } from "../deps.js";
import { type FleetRow, listFleet } from "../hosts/fleet-view.js";
import { evaluateFreshness, type GroupFreshness } from "./freshness.js";

export const HOST_STATES = ["online", "offline", "overdue", "failing"] as const;
export type HostState = (typeof HOST_STATES)[number];

/** The host list's query string (`/hosts`, `/partials/fleet`). */
export const HostListQuery = Type.Object(
  { state: Type.Optional(Type.Union(HOST_STATES.map((state) => Type.Literal(state)))) },
  { additionalProperties: false },
);
export type HostListQuery = Static<typeof HostListQuery>;

export interface HostProblems {
  overdue: ReadonlySet<string>;
  failing: ReadonlySet<string>;
}

/** Hosts with an open alert of a failed job kind (backup_failed, check_failed, ...). */
export async function failingHostIds(db: Database): Promise<Set<string>> {
  const rows = await db
    .selectDistinct({ hostId: alerts.hostId })
    .from(alerts)
    .where(and(isNull(alerts.resolvedAt), like(alerts.kind, "%\\_failed")));
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
  }
}

export type HostStateCounts = Record<HostState, number> & { total: number };

export function countHostStates(
  hosts: readonly Pick<FleetRow, "id" | "status">[],
  problems: HostProblems,
): HostStateCounts {
  const counts: HostStateCounts = { total: hosts.length, online: 0, offline: 0, overdue: 0, failing: 0 };
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
  const [groups, failing] = await Promise.all([
    evaluateFreshness(deps.db, now, { defaultTimeZone: deps.config.timeZone }),
    failingHostIds(deps.db),
  ]);
  return { groups, problems: { overdue: overdueHostIds(groups), failing } };
}

/** The fleet table's rows, all of them or those in `state`; `all` feeds the rollout form. */
export async function listHostsInState(
  deps: Pick<ServerDeps, "db" | "config" | "clock">,
  state: HostState | undefined,
): Promise<{ all: FleetRow[]; hosts: FleetRow[] }> {
  const all = await listFleet(deps.db);
  if (state === undefined) {
    return { all, hosts: all };
  }
  if (state === "online" || state === "offline") {
    return { all, hosts: all.filter((host) => host.status === state) };
  }
  // Only the problem the filter asks about is computed: freshness walks every group's schedule.
  const problems: HostProblems =
    state === "overdue"
      ? {
          overdue: overdueHostIds(
            await evaluateFreshness(deps.db, deps.clock.now(), { defaultTimeZone: deps.config.timeZone }),
          ),
          failing: new Set(),
        }
      : { overdue: new Set(), failing: await failingHostIds(deps.db) };
  return { all, hosts: all.filter((host) => isInState(host, state, problems)) };
}
