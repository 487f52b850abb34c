/**
 * @module policies/policy-apply
 * Brings hosts' configuration in line with the policies: inside the caller's transaction, under
 * one advisory lock so two replicas (or two admins) never interleave their writes, it plans every
 * given host against the stored policies (or a candidate set, for a preview or an edit) and
 * writes the plan. Schedule sets are pushed after the commit, to the hosts whose set changed.
 */
import { acquireAdvisoryXactLock, type Database, policies, type Transaction } from "@fleetback/db";
import { asc } from "drizzle-orm";
import type { ServerDeps } from "../deps.js";
import { pushScheduleSet } from "../hosts/host-push.js";
import { parseSelector } from "../labels/selector.js";
import { applyHostPlans } from "./apply-plan.js";
import type { ActivePolicy } from "./effective-config.js";
import { type HostPlan, loadFleetState, planHost } from "./fleet-plan.js";
import {
  applyMaintenancePlans,
  loadMaintenance,
  type MaintenancePlan,
  planMaintenance,
} from "./maintenance-plan.js";
import { type HookBook, hookBook, plannedGroups } from "./policy-hooks.js";
import type { PolicySpec } from "./policy-spec.js";

export const POLICY_LOCK = "policies.apply";

/** The stored policies as planning reads them: their hooks by digest in `book`. */
export async function loadActivePolicies(db: Database, book: HookBook): Promise<ActivePolicy[]> {
  const rows = await db.select().from(policies).orderBy(asc(policies.name));
  return rows.map((row) => activePolicy(book, row));
}

export function activePolicy(
  book: HookBook,
  row: { id: string; name: string; version: number; priority: number; selector: string; spec: unknown },
): ActivePolicy {
  const spec = row.spec as unknown as PolicySpec;
  return {
    id: row.id,
    name: row.name,
    version: row.version,
    priority: row.priority,
    selector: parseSelector(row.selector),
    spec: { ...spec, groups: plannedGroups(book, row.id, spec.groups) as PolicySpec["groups"] },
  };
}

export interface FleetPlan {
  plans: HostPlan[];
  /** Each planned host's maintenance: what its policies set, what goes back to the default. */
  maintenance: MaintenancePlan[];
  /** Hosts whose schedule set changed: each gets one schedule.set. */
  rescheduled: string[];
}

/** Plans the hosts (all when undefined) against `active`; writes nothing. */
export async function planFleet(
  db: Database,
  book: HookBook,
  active: readonly ActivePolicy[],
  hostIds?: readonly string[],
): Promise<Omit<FleetPlan, "rescheduled">> {
  const state = await loadFleetState(db, book, hostIds);
  const rows = await loadMaintenance(db, hostIds);
  return {
    plans: state.hosts.map((host) => planHost(host, state, active)),
    maintenance: state.hosts.map((host) => planMaintenance(host, rows.get(host.id), active)),
  };
}

/**
 * Applies the stored policies to the hosts (all when undefined) in `tx`, which must be the
 * transaction that made the change (a policy, a host's labels, a new host).
 */
export async function reconcileHosts(
  tx: Transaction | Database,
  deps: Pick<ServerDeps, "clock" | "ids"> & { keys: { secret: Uint8Array } },
  hostIds?: readonly string[],
  except: readonly string[] = [],
): Promise<FleetPlan> {
  await acquireAdvisoryXactLock(tx as Transaction, POLICY_LOCK);
  const book = hookBook(deps.keys.secret);
  // `except`: policies about to be deleted; what they gave goes before their rows do.
  const active = (await loadActivePolicies(tx, book)).filter((policy) => !except.includes(policy.id));
  const state = await loadFleetState(tx, book, hostIds);
  const plans = state.hosts.map((host) => planHost(host, state, active));
  const now = deps.clock.now();
  const rescheduled = await applyHostPlans(tx, deps, book, state, plans, now);
  const rows = await loadMaintenance(tx, hostIds);
  const maintenance = state.hosts.map((host) => planMaintenance(host, rows.get(host.id), active));
  await applyMaintenancePlans(tx, maintenance, rows, now);
  return { plans, maintenance, rescheduled };
}

/** After the commit: one schedule.set to each online host whose set changed; offline ones get it at hello. */
export async function pushSchedules(
  deps: Pick<ServerDeps, "db" | "hub" | "log">,
  hostIds: readonly string[],
): Promise<void> {
  for (const hostId of hostIds) {
    try {
      await pushScheduleSet(deps, hostId);
    } catch (err) {
      deps.log.warn(
        { err, host_id: hostId },
        "pushing a policy's schedule set failed; the host gets it at its next hello",
      );
    }
  }
}

/**
 * For a change made elsewhere that moves hosts under other policies (their labels): `onChanged`
 * brings those hosts in line inside that change's transaction, `push` sends their schedule sets
 * once it has committed.
 */
export function followPolicies(deps: Pick<ServerDeps, "db" | "clock" | "ids" | "keys" | "hub" | "log">) {
  const toPush: string[] = [];
  return {
    onChanged: async (tx: Database, hostIds: string[]) => {
      toPush.push(...(await reconcileHosts(tx, deps, hostIds)).rescheduled);
    },
    push: () => pushSchedules(deps, toPush.splice(0)),
  };
}
