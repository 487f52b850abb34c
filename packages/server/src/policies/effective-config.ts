/**
 * @module policies/effective-config
 * A host's effective configuration from the policies whose selector matches its labels, and from
 * where each setting comes (issue 37.2). Pure: the same function previews an edit for the whole
 * fleet and applies it, and a host page explains itself with it.
 *
 * Rules, in order:
 * - A group the host has of its own under the same name is the host's: the policy's is kept apart
 *   (listed, not applied).
 * - Of the policies that give a host a group of one name, the highest priority's applies; equal
 *   priorities that give it differently are a conflict, shown and not guessed (neither applies).
 * - The host's overrides of a policy group (fields it set itself) apply over the policy's.
 * - A policy's schedule fires the host's groups of the names it lists; names that did not apply
 *   are left out, and a schedule left with none is not applied (a conflict, named).
 */
import type { RetentionPolicy } from "@fleetback/db";
import type { Labels } from "../labels/label-rules.js";
import { matchesSelector, type Selector } from "../labels/selector.js";
import { GROUP_SETTING_KEYS } from "../sources/source-group-schema.js";
import { POLICY_HOOK_FIELDS } from "./policy-hooks.js";
import type { PolicyGroup, PolicySpec } from "./policy-spec.js";

export interface PolicyRef {
  id: string;
  name: string;
  version: number;
}

export interface ActivePolicy extends PolicyRef {
  priority: number;
  selector: Selector;
  /** As planning reads it: hooks by digest (policy-hooks.ts' plannedGroups). */
  spec: PolicySpec;
}

/** A group's settings under their API names, as a host's own group has them. */
export interface GroupSettings {
  includes: string[];
  excludes: string[];
  retention_policy: RetentionPolicy;
  retry_max: number;
  retry_backoff_seconds: number;
  grace_seconds: number | null;
  bandwidth_up_kbps: number | null;
  bandwidth_down_kbps: number | null;
  /** The hooks by their keyed digest (policy-hooks.ts' HookBook), never their text; null: none. */
  pre_hook: string | null;
  post_hook: string | null;
}

export const SETTING_KEYS = [...GROUP_SETTING_KEYS, ...POLICY_HOOK_FIELDS] as const satisfies ReadonlyArray<
  keyof GroupSettings
>;
export type SettingKey = (typeof SETTING_KEYS)[number];

export interface HostConfigInput {
  labels: Labels;
  /** Names of the groups the host has of its own (no policy). */
  ownGroups: ReadonlySet<string>;
  /** Per policy group name, the fields the host set itself. */
  overrides: ReadonlyMap<string, Partial<GroupSettings>>;
}

export interface EffectiveGroup {
  name: string;
  settings: GroupSettings;
  from: PolicyRef;
  /** Fields whose value is the host's own, not the policy's. */
  overridden: SettingKey[];
}

export interface EffectiveSchedule {
  /** The schedule's name within its policy. */
  name: string;
  cron: string;
  enabled: boolean;
  groups: string[];
  from: PolicyRef;
}

export interface PolicyConflict {
  /** The group or schedule (`policy/schedule`) concerned. */
  subject: string;
  policies: PolicyRef[];
  message: string;
}

export interface KeptApart {
  group: string;
  from: PolicyRef;
  message: string;
}

export interface EffectiveConfig {
  matched: PolicyRef[];
  groups: EffectiveGroup[];
  schedules: EffectiveSchedule[];
  conflicts: PolicyConflict[];
  keptApart: KeptApart[];
}

const DEFAULTS = { retry_max: 3, retry_backoff_seconds: 300 } as const;

function ref(policy: ActivePolicy): PolicyRef {
  return { id: policy.id, name: policy.name, version: policy.version };
}

/**
 * A policy group's settings with the defaults a host's own group gets for what it leaves out. The
 * group is as planning reads it (policy-hooks.ts' plannedGroups): its hooks are digests.
 */
export function settingsOf(group: PolicyGroup): GroupSettings {
  return {
    includes: group.includes,
    excludes: group.excludes ?? [],
    retention_policy: (group.retention_policy ?? {}) as RetentionPolicy,
    retry_max: group.retry_max ?? DEFAULTS.retry_max,
    retry_backoff_seconds: group.retry_backoff_seconds ?? DEFAULTS.retry_backoff_seconds,
    grace_seconds: group.grace_seconds ?? null,
    bandwidth_up_kbps: group.bandwidth_up_kbps ?? null,
    bandwidth_down_kbps: group.bandwidth_down_kbps ?? null,
    pre_hook: group.pre_hook ?? null,
    post_hook: group.post_hook ?? null,
  };
}

/** JSON with object keys sorted: two settings are the same when these are. */
export function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner !== null && typeof inner === "object" && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : inner,
  );
}

const byPriority = (a: ActivePolicy, b: ActivePolicy) =>
  b.priority - a.priority || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

export function effectiveConfig(host: HostConfigInput, policies: readonly ActivePolicy[]): EffectiveConfig {
  const matching = policies
    .filter((policy) => matchesSelector(policy.selector, host.labels))
    .sort(byPriority);
  const offers = new Map<string, Array<{ policy: ActivePolicy; settings: GroupSettings }>>();
  for (const policy of matching) {
    for (const group of policy.spec.groups) {
      const list = offers.get(group.name) ?? [];
      list.push({ policy, settings: settingsOf(group) });
      offers.set(group.name, list);
    }
  }
  const groups: EffectiveGroup[] = [];
  const conflicts: PolicyConflict[] = [];
  const keptApart: KeptApart[] = [];
  for (const [name, offered] of [...offers].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (host.ownGroups.has(name)) {
      for (const { policy } of offered) {
        keptApart.push({
          group: name,
          from: ref(policy),
          message: `the host has a group ${name} of its own, which applies instead of policy ${policy.name}'s`,
        });
      }
      continue;
    }
    const top = offered.filter((offer) => offer.policy.priority === offered[0]?.policy.priority);
    const distinct = new Set(top.map((offer) => canonical(offer.settings)));
    if (distinct.size > 1) {
      conflicts.push({
        subject: name,
        policies: top.map((offer) => ref(offer.policy)),
        message: `policies ${top.map((offer) => offer.policy.name).join(", ")} (priority ${top[0]?.policy.priority}) give group ${name} differently; neither applies until one changes or its priority does`,
      });
      continue;
    }
    const chosen = top[0];
    if (chosen === undefined) {
      continue;
    }
    const own = host.overrides.get(name) ?? {};
    const overridden = SETTING_KEYS.filter((key) => Object.hasOwn(own, key));
    groups.push({
      name,
      settings: { ...chosen.settings, ...own },
      from: ref(chosen.policy),
      overridden,
    });
  }
  const applied = new Set(groups.map((group) => group.name));
  const schedules: EffectiveSchedule[] = [];
  for (const policy of matching) {
    for (const schedule of policy.spec.schedules ?? []) {
      const fired = schedule.groups.filter((name) => applied.has(name));
      if (fired.length === 0) {
        conflicts.push({
          subject: `${policy.name}/${schedule.name}`,
          policies: [ref(policy)],
          message: `schedule ${schedule.name} of policy ${policy.name} fires none of its groups on this host (${schedule.groups.join(", ")}: kept apart or in conflict), so it does not apply`,
        });
        continue;
      }
      schedules.push({
        name: schedule.name,
        cron: schedule.cron,
        enabled: schedule.enabled ?? true,
        groups: fired,
        from: ref(policy),
      });
    }
  }
  return { matched: matching.map(ref), groups, schedules, conflicts, keptApart };
}

/** A host's maintenance as its policies give it: each field from the highest priority that sets it. */
export interface EffectiveMaintenance {
  values: Record<string, unknown>;
  from: Record<string, PolicyRef>;
  /** Fields the host set itself over its policies'. */
  overridden: string[];
  conflicts: PolicyConflict[];
}

export function effectiveMaintenance(
  labels: Labels,
  policies: readonly ActivePolicy[],
  overrides: Readonly<Record<string, unknown>>,
): EffectiveMaintenance {
  const matching = policies.filter((policy) => matchesSelector(policy.selector, labels)).sort(byPriority);
  const result: EffectiveMaintenance = { values: {}, from: {}, overridden: [], conflicts: [] };
  const fields = new Set(matching.flatMap((policy) => Object.keys(policy.spec.maintenance ?? {})));
  for (const field of [...fields].sort()) {
    const offers = matching.filter(
      (policy) => (policy.spec.maintenance as Record<string, unknown> | undefined)?.[field] !== undefined,
    );
    const top = offers.filter((policy) => policy.priority === offers[0]?.priority);
    const offered = (policy: ActivePolicy) => (policy.spec.maintenance as Record<string, unknown>)[field];
    if (new Set(top.map((policy) => canonical(offered(policy)))).size > 1) {
      result.conflicts.push({
        subject: `maintenance.${field}`,
        policies: top.map(ref),
        message: `policies ${top.map((p) => p.name).join(", ")} (priority ${top[0]?.priority}) give maintenance ${field} differently; neither applies`,
      });
      continue;
    }
    const chosen = top[0];
    if (chosen === undefined) {
      continue;
    }
    if (Object.hasOwn(overrides, field)) {
      result.overridden.push(field);
      continue;
    }
    result.values[field] = offered(chosen);
    result.from[field] = ref(chosen);
  }
  return result;
}
