/**
 * @module policies/fleet-plan
 * What a set of policies changes on every host (issue 37.3): read the hosts' labels and their
 * groups and schedules, compute each host's effective configuration (effective-config.ts) and
 * compare it with the rows the policies wrote before. The same plan is a preview (nothing
 * written) and, inside the applying transaction, the list of writes (apply-plan.ts).
 */
import {
  type Database,
  hosts,
  type RetentionPolicy,
  scheduleSourceGroups,
  schedules,
  sourceGroups,
} from "@fleetback/db";
import { type AnyColumn, asc, eq, inArray } from "drizzle-orm";
import type { Labels } from "../labels/label-rules.js";
import { openHook } from "../sources/hooks.js";
import {
  type ActivePolicy,
  canonical,
  type EffectiveConfig,
  effectiveConfig,
  type GroupSettings,
  type KeptApart,
  type PolicyConflict,
  SETTING_KEYS,
  type SettingKey,
} from "./effective-config.js";
import { type HookBook, POLICY_HOOK_FIELDS } from "./policy-hooks.js";

export interface GroupRow {
  id: string;
  hostId: string;
  name: string;
  policyId: string | null;
  policyVersion: number | null;
  overrides: Record<string, unknown>;
  settings: GroupSettings;
  includes: string[];
  createdAt: Date;
  conflictDimension: string | null;
}

export interface ScheduleRow {
  id: string;
  hostId: string;
  policyId: string;
  policySchedule: string;
  policyVersion: number | null;
  cron: string;
  enabled: boolean;
  groupIds: string[];
}

export interface HostPlan {
  hostId: string;
  hostName: string;
  config: EffectiveConfig;
  groups: {
    added: string[];
    changed: Array<{ name: string; fields: SettingKey[] }>;
    removed: string[];
    /** Policy groups no policy gives any more that a host's own schedule fires: now the host's. */
    detached: string[];
  };
  schedules: { added: string[]; changed: string[]; removed: string[] };
  /** Only the policy version moves: provenance is rewritten, the host's configuration is not. */
  restamped: number;
  keptApart: KeptApart[];
  conflicts: PolicyConflict[];
}

export interface FleetState {
  hosts: Array<{ id: string; name: string; labels: Labels }>;
  groups: Map<string, GroupRow[]>;
  policySchedules: Map<string, ScheduleRow[]>;
  /** Group ids a host's own schedule fires. */
  ownScheduled: Set<string>;
}

/** A host's group row's settings; its hooks opened (host's key) and taken by their digest. */
export function rowSettings(
  book: HookBook,
  row: {
    hostId: string;
    preHook: Uint8Array | null;
    postHook: Uint8Array | null;
    includes: string[];
    excludes: string[];
    retentionPolicy: RetentionPolicy;
    retryMax: number;
    retryBackoffSeconds: number;
    graceSeconds: number | null;
    bandwidthUpKbps: number | null;
    bandwidthDownKbps: number | null;
  },
): GroupSettings {
  const hook = (sealed: Uint8Array | null) => book.digest(openHook(book.key, row.hostId, sealed));
  return {
    includes: row.includes,
    excludes: row.excludes,
    retention_policy: row.retentionPolicy,
    retry_max: row.retryMax,
    retry_backoff_seconds: row.retryBackoffSeconds,
    grace_seconds: row.graceSeconds,
    bandwidth_up_kbps: row.bandwidthUpKbps,
    bandwidth_down_kbps: row.bandwidthDownKbps,
    pre_hook: hook(row.preHook),
    post_hook: hook(row.postHook),
  };
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) {
    list.push(value);
  } else {
    map.set(key, [value]);
  }
}

/** Reads what planning needs of the given hosts (all when undefined), in a few statements. */
export async function loadFleetState(
  db: Database,
  book: HookBook,
  hostIds?: readonly string[],
): Promise<FleetState> {
  const of = (column: AnyColumn) => (hostIds === undefined ? undefined : inArray(column, [...hostIds]));
  const hostRows = await db
    .select({ id: hosts.id, name: hosts.name, labels: hosts.labels })
    .from(hosts)
    .where(of(hosts.id))
    .orderBy(asc(hosts.name));
  const groupRows = await db.select().from(sourceGroups).where(of(sourceGroups.hostId));
  const groups = new Map<string, GroupRow[]>();
  for (const row of groupRows) {
    push(groups, row.hostId, {
      id: row.id,
      hostId: row.hostId,
      name: row.name,
      policyId: row.policyId,
      policyVersion: row.policyVersion,
      overrides: row.overrides,
      settings: rowSettings(book, row),
      includes: row.includes,
      createdAt: row.createdAt,
      conflictDimension: row.conflictDimension,
    });
  }
  const scheduleRows = await db
    .select({
      id: schedules.id,
      hostId: schedules.hostId,
      policyId: schedules.policyId,
      policySchedule: schedules.policySchedule,
      policyVersion: schedules.policyVersion,
      cron: schedules.cron,
      enabled: schedules.enabled,
      groupId: scheduleSourceGroups.sourceGroupId,
    })
    .from(schedules)
    .leftJoin(scheduleSourceGroups, eq(scheduleSourceGroups.scheduleId, schedules.id))
    .where(of(schedules.hostId));
  const policySchedules = new Map<string, ScheduleRow[]>();
  const byId = new Map<string, ScheduleRow>();
  const ownScheduled = new Set<string>();
  for (const row of scheduleRows) {
    if (row.policyId === null || row.policySchedule === null) {
      if (row.groupId !== null) {
        ownScheduled.add(row.groupId);
      }
      continue;
    }
    let schedule = byId.get(row.id);
    if (!schedule) {
      schedule = { ...row, policyId: row.policyId, policySchedule: row.policySchedule, groupIds: [] };
      byId.set(row.id, schedule);
      push(policySchedules, row.hostId, schedule);
    }
    if (row.groupId !== null) {
      schedule.groupIds.push(row.groupId);
    }
  }
  return { hosts: hostRows, groups, policySchedules, ownScheduled };
}

/**
 * The fields of `overrides` that are settings, as settings. A hook the host set itself is only
 * marked there (its text is sealed in the row, never in `overrides`): its value is the row's.
 */
function overridesOf(row: GroupRow): Partial<GroupSettings> {
  return Object.fromEntries(
    SETTING_KEYS.filter((key) => Object.hasOwn(row.overrides, key)).map((key) => [
      key,
      (POLICY_HOOK_FIELDS as readonly string[]).includes(key) ? row.settings[key] : row.overrides[key],
    ]),
  );
}

/**
 * The canonical text of each object a planning run compares, once per object: a policy's
 * includes, excludes and retention are the same objects on every host it covers, and
 * canonicalising them anew for each of 10,000 hosts was a good part of planning a fleet. Kept per
 * state, so nothing outlives the run that read those objects.
 */
const canonicalTexts = new WeakMap<FleetState, WeakMap<object, string>>();

function canonicalIn(state: FleetState, value: unknown): string {
  if (value === null || typeof value !== "object") {
    return canonical(value);
  }
  let texts = canonicalTexts.get(state);
  if (!texts) {
    texts = new WeakMap();
    canonicalTexts.set(state, texts);
  }
  let text = texts.get(value);
  if (text === undefined) {
    text = canonical(value);
    texts.set(value, text);
  }
  return text;
}

function sameSetting(state: FleetState, a: unknown, b: unknown): boolean {
  return a === b || canonicalIn(state, a) === canonicalIn(state, b);
}

export function planHost(
  host: FleetState["hosts"][number],
  state: FleetState,
  policies: readonly ActivePolicy[],
): HostPlan {
  const rows = state.groups.get(host.id) ?? [];
  const own = rows.filter((row) => row.policyId === null);
  const fromPolicies = new Map(rows.filter((row) => row.policyId !== null).map((row) => [row.name, row]));
  const config = effectiveConfig(
    {
      labels: host.labels,
      ownGroups: new Set(own.map((row) => row.name)),
      overrides: new Map([...fromPolicies.values()].map((row) => [row.name, overridesOf(row)])),
    },
    policies,
  );
  const plan: HostPlan = {
    hostId: host.id,
    hostName: host.name,
    config,
    groups: { added: [], changed: [], removed: [], detached: [] },
    schedules: { added: [], changed: [], removed: [] },
    restamped: 0,
    keptApart: config.keptApart,
    conflicts: config.conflicts,
  };
  const wanted = new Set(config.groups.map((group) => group.name));
  for (const group of config.groups) {
    const row = fromPolicies.get(group.name);
    if (!row) {
      plan.groups.added.push(group.name);
      continue;
    }
    const fields = SETTING_KEYS.filter((key) => !sameSetting(state, row.settings[key], group.settings[key]));
    if (fields.length > 0) {
      plan.groups.changed.push({ name: group.name, fields });
    } else if (row.policyId !== group.from.id || row.policyVersion !== group.from.version) {
      plan.restamped += 1;
    }
  }
  for (const row of fromPolicies.values()) {
    if (!wanted.has(row.name)) {
      (state.ownScheduled.has(row.id) ? plan.groups.detached : plan.groups.removed).push(row.name);
    }
  }
  const existing = new Map(
    (state.policySchedules.get(host.id) ?? []).map((row) => [`${row.policyId}/${row.policySchedule}`, row]),
  );
  const groupNameOf = new Map(rows.map((row) => [row.id, row.name]));
  const seen = new Set<string>();
  for (const schedule of config.schedules) {
    const key = `${schedule.from.id}/${schedule.name}`;
    seen.add(key);
    const label = `${schedule.from.name}/${schedule.name}`;
    const row = existing.get(key);
    if (!row) {
      plan.schedules.added.push(label);
      continue;
    }
    const names = row.groupIds.map((id) => groupNameOf.get(id)).sort();
    if (
      row.cron !== schedule.cron ||
      row.enabled !== schedule.enabled ||
      canonical(names) !== canonical([...schedule.groups].sort())
    ) {
      plan.schedules.changed.push(label);
    } else if (row.policyVersion !== schedule.from.version) {
      plan.restamped += 1;
    }
  }
  for (const [key, row] of existing) {
    if (!seen.has(key)) {
      plan.schedules.removed.push(row.policySchedule);
    }
  }
  return plan;
}

/** True when the plan changes what the host backs up or when. */
export function changesHost(plan: HostPlan): boolean {
  const { groups, schedules: s } = plan;
  return (
    groups.added.length + groups.changed.length + groups.removed.length + groups.detached.length > 0 ||
    s.added.length + s.changed.length + s.removed.length > 0
  );
}
