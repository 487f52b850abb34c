/**
 * @module policies/policy-store
 * Creating, editing, rolling back and deleting fleet policies (issue 37.3). Each is one
 * transaction: the policy row, its new immutable version, the hosts' configuration brought in line
 * (policy-apply.ts) and one audit entry with what changed on how many hosts. The schedule sets go
 * out after the commit. A preview runs the same plan against the candidate and writes nothing.
 */
import { type Database, isUniqueViolation, policies, policyVersions } from "@fleetback/db";
import { and, asc, desc, eq } from "drizzle-orm";
import { type AuditContext, writeAudit } from "../audit/audit.js";
import type { ServerDeps } from "../deps.js";
import { conflict, notFound } from "../errors.js";
import { changesHost, type HostPlan } from "./fleet-plan.js";
import {
  activePolicy,
  type FleetPlan,
  loadActivePolicies,
  planFleet,
  pushSchedules,
  reconcileHosts,
} from "./policy-apply.js";
import { type Group, hookBook, openedGroups, sealPolicyHooks } from "./policy-hooks.js";
import { checkPolicyBody, type PolicyBody, type PolicySpec } from "./policy-spec.js";

type StoreDeps = Pick<ServerDeps, "db" | "clock" | "ids" | "keys" | "hub" | "log">;

/** What an applied or previewed change does, in counts and per changed host. */
export interface PlanSummary {
  hosts_covered: number;
  hosts_changed: number;
  hosts: Array<{
    host_id: string;
    host_name: string;
    groups: HostPlan["groups"];
    schedules: HostPlan["schedules"];
    /** Maintenance fields whose value changes. */
    maintenance: string[];
    kept_apart: HostPlan["keptApart"];
    conflicts: HostPlan["conflicts"];
  }>;
}

export function summarise(fleet: Omit<FleetPlan, "rescheduled">, policyId?: string): PlanSummary {
  const { plans } = fleet;
  const maintenance = new Map(fleet.maintenance.map((plan) => [plan.hostId, plan]));
  const maintained = (plan: HostPlan) => maintenance.get(plan.hostId)?.changed ?? [];
  const conflicts = (plan: HostPlan) => [
    ...plan.conflicts,
    ...(maintenance.get(plan.hostId)?.effective.conflicts ?? []),
  ];
  const changes = (plan: HostPlan) => changesHost(plan) || maintained(plan).length > 0;
  const covered = plans.filter(
    (plan) => policyId === undefined || plan.config.matched.some((p) => p.id === policyId),
  );
  const shown = plans.filter(
    (plan) => changes(plan) || plan.keptApart.length > 0 || conflicts(plan).length > 0,
  );
  return {
    hosts_covered: covered.length,
    hosts_changed: plans.filter(changes).length,
    hosts: shown.map((plan) => ({
      host_id: plan.hostId,
      host_name: plan.hostName,
      groups: plan.groups,
      schedules: plan.schedules,
      maintenance: maintained(plan),
      kept_apart: plan.keptApart,
      conflicts: conflicts(plan),
    })),
  };
}

export function listPolicies(db: Database) {
  return db.select().from(policies).orderBy(asc(policies.name));
}

export async function getPolicy(db: Database, id: string) {
  const [row] = await db.select().from(policies).where(eq(policies.id, id));
  if (!row) {
    throw notFound(`No policy ${id}`);
  }
  return row;
}

export async function listVersions(db: Database, id: string) {
  await getPolicy(db, id);
  return db
    .select()
    .from(policyVersions)
    .where(eq(policyVersions.policyId, id))
    .orderBy(desc(policyVersions.version));
}

export async function getVersion(db: Database, id: string, version: number) {
  const [row] = await db
    .select()
    .from(policyVersions)
    .where(and(eq(policyVersions.policyId, id), eq(policyVersions.version, version)));
  if (!row) {
    throw notFound(`Policy ${id} has no version ${version}`);
  }
  return row;
}

/** What the fleet would look like with `body` as policy `id` (a new one when undefined). */
export async function previewPolicy(
  deps: Pick<ServerDeps, "db" | "keys">,
  body: PolicyBody,
  id?: string,
): Promise<PlanSummary> {
  const checked = checkPolicyBody(body);
  const book = hookBook(deps.keys.secret);
  const current = await loadActivePolicies(deps.db, book);
  const existing = id === undefined ? undefined : await getPolicy(deps.db, id);
  const candidateId = id ?? "(new)";
  const candidate = activePolicy(book, {
    id: candidateId,
    name: checked.name,
    version: (existing?.version ?? 0) + 1,
    priority: checked.priority,
    selector: checked.selector,
    spec: sealedSpec(deps.keys.secret, candidateId, checked.spec, existing?.spec),
  });
  const plans = await planFleet(deps.db, book, [...current.filter((policy) => policy.id !== id), candidate]);
  return summarise(plans, candidateId);
}

/** A checked spec as stored: its hooks sealed, left-out ones carried from `current`'s groups. */
export function sealedSpec(
  key: Uint8Array,
  id: string,
  spec: PolicySpec,
  current?: unknown,
): Record<string, unknown> {
  const groups = ((current as PolicySpec | undefined)?.groups ?? []) as Group[];
  return { ...spec, groups: sealPolicyHooks(key, id, spec.groups as Group[], groups) };
}

export async function named<T>(name: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (isUniqueViolation(err, "policies_name_key")) {
      throw conflict(`name: a policy named ${name} exists`, [{ field: "name", message: "taken" }]);
    }
    throw err;
  }
}

/**
 * Writes a checked body as the policy's next version (1 for a new one) inside `tx`, without
 * bringing hosts in line: the caller does that once for all it writes.
 */
export async function storeVersion(
  tx: Database,
  key: Uint8Array,
  now: Date,
  audit: AuditContext,
  id: string,
  checked: ReturnType<typeof checkPolicyBody>,
): Promise<number> {
  const [current] = await tx.select().from(policies).where(eq(policies.id, id)).for("update");
  const version = (current?.version ?? 0) + 1;
  const row = {
    name: checked.name,
    version,
    selector: checked.selector,
    priority: checked.priority,
    spec: sealedSpec(key, id, checked.spec, current?.spec),
    updatedAt: now,
  };
  if (current) {
    await tx.update(policies).set(row).where(eq(policies.id, id));
  } else {
    await tx.insert(policies).values({ id, ...row, createdAt: now });
  }
  await tx.insert(policyVersions).values({
    policyId: id,
    version,
    name: row.name,
    selector: row.selector,
    priority: row.priority,
    spec: row.spec,
    actorUserId: audit.actor.userId,
    note: checked.note ?? null,
    createdAt: now,
  });
  return version;
}

/** Writes `body` as the policy's next version, applies it, audits, pushes. */
async function writeVersion(
  deps: StoreDeps,
  audit: AuditContext,
  action: string,
  id: string,
  body: PolicyBody,
  details: Record<string, unknown> = {},
): Promise<{ id: string; version: number; plan: PlanSummary }> {
  const checked = checkPolicyBody(body);
  const result = await named(checked.name, () =>
    deps.db.transaction(async (tx) => {
      const version = await storeVersion(tx, deps.keys.secret, deps.clock.now(), audit, id, checked);
      const fleet = await reconcileHosts(tx, deps);
      const plan = summarise(fleet, id);
      await writeAudit(tx, deps, {
        ...audit,
        action,
        targetKind: "policy",
        targetId: id,
        details: {
          name: checked.name,
          version,
          selector: checked.selector,
          priority: checked.priority,
          hosts_covered: plan.hosts_covered,
          hosts_changed: plan.hosts_changed,
          ...details,
        },
      });
      return { id, version, plan, rescheduled: fleet.rescheduled };
    }),
  );
  await pushSchedules(deps, result.rescheduled);
  return { id: result.id, version: result.version, plan: result.plan };
}

export function createPolicy(deps: StoreDeps, audit: AuditContext, body: PolicyBody) {
  return writeVersion(deps, audit, "policy.create", deps.ids.ulid(deps.clock.now()), body);
}

export async function updatePolicy(deps: StoreDeps, audit: AuditContext, id: string, body: PolicyBody) {
  const before = await getPolicy(deps.db, id);
  return writeVersion(deps, audit, "policy.update", id, body, { from_version: before.version });
}

/** Applies an old version's content as the next version. */
export async function rollbackPolicy(deps: StoreDeps, audit: AuditContext, id: string, version: number) {
  const before = await getPolicy(deps.db, id);
  const old = await getVersion(deps.db, id, version);
  const spec = old.spec as unknown as PolicySpec;
  const body: PolicyBody = {
    name: old.name,
    selector: old.selector,
    priority: old.priority,
    // The old version's hooks as text, so that they are what the new version holds.
    spec: {
      ...spec,
      groups: openedGroups(deps.keys.secret, id, spec.groups as Group[]) as PolicySpec["groups"],
    },
    note: `rollback to version ${version}`,
  };
  return writeVersion(deps, audit, "policy.rollback", id, body, {
    from_version: before.version,
    to_content_of: version,
  });
}

/** Deletes the policy; what it gave hosts goes (a group a host's own schedule fires stays, as the host's). */
export async function deletePolicy(deps: StoreDeps, audit: AuditContext, id: string): Promise<PlanSummary> {
  const result = await deps.db.transaction(async (tx) => {
    const [row] = await tx.select().from(policies).where(eq(policies.id, id)).for("update");
    if (!row) {
      throw notFound(`No policy ${id}`);
    }
    // Before the row goes: its delete would make what it gave look like the hosts' own groups.
    const fleet = await reconcileHosts(tx, deps, undefined, [id]);
    await tx.delete(policies).where(eq(policies.id, id));
    const plan = summarise(fleet, id);
    await writeAudit(tx, deps, {
      ...audit,
      action: "policy.delete",
      targetKind: "policy",
      targetId: id,
      details: { name: row.name, version: row.version, hosts_changed: plan.hosts_changed },
    });
    return { plan, rescheduled: fleet.rescheduled };
  });
  await pushSchedules(deps, result.rescheduled);
  return result.plan;
}
