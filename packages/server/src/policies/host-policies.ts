/**
 * @module policies/host-policies
 * Where each of a host's settings comes from (issue 37.2): every group, the host's own or a
 * policy's (name and version, and which fields the host set itself), the policies' schedules, and
 * what the policies would give it but do not (kept apart by the host's own group, or in conflict).
 */
import type { Database } from "@fleetback/db";
import { notFound } from "../errors.js";
import type {
  EffectiveConfig,
  GroupSettings,
  KeptApart,
  PolicyConflict,
  PolicyRef,
} from "./effective-config.js";
import { loadFleetState, planHost } from "./fleet-plan.js";
import { loadMaintenance, planMaintenance } from "./maintenance-plan.js";
import { loadActivePolicies } from "./policy-apply.js";

export interface HostPolicies {
  matched: PolicyRef[];
  groups: Array<{ name: string; from: PolicyRef | null; overridden: string[]; settings: GroupSettings }>;
  schedules: EffectiveConfig["schedules"];
  conflicts: PolicyConflict[];
  kept_apart: KeptApart[];
  /** The maintenance fields policies set (value and policy), and those the host set itself over them. */
  maintenance: { values: Record<string, unknown>; from: Record<string, PolicyRef>; overridden: string[] };
}

export async function hostPolicies(db: Database, hostId: string): Promise<HostPolicies> {
  const state = await loadFleetState(db, [hostId]);
  const host = state.hosts[0];
  if (!host) {
    throw notFound(`No host ${hostId}`);
  }
  const active = await loadActivePolicies(db);
  const plan = planHost(host, state, active);
  const maintenance = planMaintenance(
    host,
    (await loadMaintenance(db, [hostId])).get(hostId),
    active,
  ).effective;
  const own = (state.groups.get(hostId) ?? [])
    .filter((row) => row.policyId === null)
    .map((row) => ({ name: row.name, from: null, overridden: [], settings: row.settings }));
  const fromPolicies = plan.config.groups.map((group) => ({
    name: group.name,
    from: group.from,
    overridden: [...group.overridden],
    settings: group.settings,
  }));
  return {
    matched: plan.config.matched,
    groups: [...own, ...fromPolicies].sort((a, b) => (a.name < b.name ? -1 : 1)),
    schedules: plan.config.schedules,
    conflicts: [...plan.conflicts, ...maintenance.conflicts],
    kept_apart: plan.keptApart,
    maintenance: { values: maintenance.values, from: maintenance.from, overridden: maintenance.overridden },
  };
}
