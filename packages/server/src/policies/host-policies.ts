/**
 * @module policies/host-policies
 * Where each of a host's settings comes from (issue 37.2): every group, the host's own or a
 * policy's (name and version, and which fields the host set itself), the policies' schedules, and
 * what the policies would give it but do not (kept apart by the host's own group, or in conflict).
 */
import type { ServerDeps } from "../deps.js";
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
import { hookBook } from "./policy-hooks.js";

/** A group's settings as shown: its hooks as has_pre_hook / has_post_hook, not their digests. */
export type ShownSettings = Omit<GroupSettings, "pre_hook" | "post_hook"> & {
  has_pre_hook: boolean;
  has_post_hook: boolean;
};

function shown({ pre_hook, post_hook, ...settings }: GroupSettings): ShownSettings {
  return { ...settings, has_pre_hook: pre_hook !== null, has_post_hook: post_hook !== null };
}

export interface HostPolicies {
  matched: PolicyRef[];
  groups: Array<{ name: string; from: PolicyRef | null; overridden: string[]; settings: ShownSettings }>;
  schedules: EffectiveConfig["schedules"];
  conflicts: PolicyConflict[];
  kept_apart: KeptApart[];
  /** The maintenance fields policies set (value and policy), and those the host set itself over them. */
  maintenance: { values: Record<string, unknown>; from: Record<string, PolicyRef>; overridden: string[] };
}

export async function hostPolicies(
  deps: Pick<ServerDeps, "db" | "keys">,
  hostId: string,
): Promise<HostPolicies> {
  const { db } = deps;
  const book = hookBook(deps.keys.secret);
  const state = await loadFleetState(db, book, [hostId]);
  const host = state.hosts[0];
  if (!host) {
    throw notFound(`No host ${hostId}`);
  }
  const active = await loadActivePolicies(db, book);
  const plan = planHost(host, state, active);
  const maintenance = planMaintenance(
    host,
    (await loadMaintenance(db, [hostId])).get(hostId),
    active,
  ).effective;
  const own = (state.groups.get(hostId) ?? [])
    .filter((row) => row.policyId === null)
    .map((row) => ({ name: row.name, from: null, overridden: [], settings: shown(row.settings) }));
  const fromPolicies = plan.config.groups.map((group) => ({
    name: group.name,
    from: group.from,
    overridden: [...group.overridden],
    settings: shown(group.settings),
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
