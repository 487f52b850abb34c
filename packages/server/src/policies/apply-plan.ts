/**
 * @module policies/apply-plan
 * Writes host plans (fleet-plan.ts) into the hosts' source_groups and schedules rows inside the
 * caller's transaction: new policy groups and schedules in batched inserts, changed ones updated
 * with their new policy version, removed ones deleted (a group a host's own schedule still fires
 * becomes the host's instead), and the schedule version bumped once per host whose schedules
 * changed, so that host, and only it, gets one schedule.set.
 */
import { type Database, hosts, scheduleSourceGroups, schedules, sourceGroups } from "@fleetback/db";
import { and, inArray, isNotNull, type SQL, sql } from "drizzle-orm";
import type { Ids } from "../ids.js";
import { computeConflictDimensions } from "../sources/conflict-dimension.js";
import type { GroupSettings } from "./effective-config.js";
import { changesHost, type FleetState, type HostPlan } from "./fleet-plan.js";

const BATCH = 500;

function columns(settings: GroupSettings) {
  return {
    includes: settings.includes,
    excludes: settings.excludes,
    retentionPolicy: settings.retention_policy,
    retryMax: settings.retry_max,
    retryBackoffSeconds: settings.retry_backoff_seconds,
    graceSeconds: settings.grace_seconds,
    bandwidthUpKbps: settings.bandwidth_up_kbps,
    bandwidthDownKbps: settings.bandwidth_down_kbps,
  };
}

async function insertInBatches<T>(rows: T[], insert: (batch: T[]) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < rows.length; i += BATCH) {
    await insert(rows.slice(i, i + BATCH));
  }
}

/**
 * One UPDATE ... FROM (VALUES ...) per batch instead of one statement per row: at fleet scale a
 * policy edit rewrites a group and a schedule on every host, and a statement per row is most of
 * its time (each is a round trip, and PGlite runs them one by one). Each value carries its cast so
 * the VALUES list is typed the same on PGlite and on postgres.js, whatever the driver infers.
 */
async function updateInBatches<T>(
  tx: Database,
  rows: T[],
  statement: (values: SQL) => SQL,
  row: (value: T) => SQL,
): Promise<void> {
  for (let i = 0; i < rows.length; i += BATCH) {
    const values = sql.join(
      rows.slice(i, i + BATCH).map((value) => sql`(${row(value)})`),
      sql`, `,
    );
    await tx.execute(statement(values));
  }
}

const json = (value: unknown) => sql`${JSON.stringify(value)}::jsonb`;
const timestamp = (value: Date) => sql`${value.toISOString()}::timestamptz`;

interface GroupUpdate {
  id: string;
  settings: GroupSettings;
  policyId: string;
  policyVersion: number;
}

interface ScheduleUpdate {
  id: string;
  cron: string;
  enabled: boolean;
  policyId: string;
  policyVersion: number;
  policySchedule: string;
}

/** The same columns the per-row `.set(...)` wrote, for every changed group of the batch. */
function updateGroups(tx: Database, updates: GroupUpdate[], now: Date): Promise<void> {
  return updateInBatches(
    tx,
    updates,
    (values) => sql`update source_groups as g set
        includes = v.includes, excludes = v.excludes, retention_policy = v.retention_policy,
        retry_max = v.retry_max, retry_backoff_seconds = v.retry_backoff_seconds,
        grace_seconds = v.grace_seconds, bandwidth_up_kbps = v.bandwidth_up_kbps,
        bandwidth_down_kbps = v.bandwidth_down_kbps, policy_id = v.policy_id,
        policy_version = v.policy_version, updated_at = ${timestamp(now)}
      from (values ${values}) as v(id, includes, excludes, retention_policy, retry_max,
        retry_backoff_seconds, grace_seconds, bandwidth_up_kbps, bandwidth_down_kbps, policy_id,
        policy_version)
      where g.id = v.id`,
    (u) => {
      const c = columns(u.settings);
      return sql`${u.id}::text, ${json(c.includes)}, ${json(c.excludes)}, ${json(c.retentionPolicy)},
        ${c.retryMax}::integer, ${c.retryBackoffSeconds}::integer, ${c.graceSeconds}::integer,
        ${c.bandwidthUpKbps}::integer, ${c.bandwidthDownKbps}::integer, ${u.policyId}::text,
        ${u.policyVersion}::integer`;
    },
  );
}

function updateSchedules(tx: Database, updates: ScheduleUpdate[], now: Date): Promise<void> {
  return updateInBatches(
    tx,
    updates,
    (values) => sql`update schedules as s set
        cron = v.cron, enabled = v.enabled, policy_id = v.policy_id,
        policy_version = v.policy_version, policy_schedule = v.policy_schedule,
        updated_at = ${timestamp(now)}
      from (values ${values}) as v(id, cron, enabled, policy_id, policy_version, policy_schedule)
      where s.id = v.id`,
    (u) => sql`${u.id}::text, ${u.cron}::text, ${u.enabled}::boolean, ${u.policyId}::text,
      ${u.policyVersion}::integer, ${u.policySchedule}::text`,
  );
}

/** Applies the plans; returns the ids of the hosts whose schedule set changed (to push). */
export async function applyHostPlans(
  tx: Database,
  deps: { ids: Ids },
  state: FleetState,
  plans: readonly HostPlan[],
  now: Date,
): Promise<string[]> {
  const newGroups: Array<typeof sourceGroups.$inferInsert> = [];
  const newSchedules: Array<typeof schedules.$inferInsert> = [];
  const members: Array<{ scheduleId: string; sourceGroupId: string }> = [];
  const deletedGroups: string[] = [];
  const deletedSchedules: string[] = [];
  const rescheduled: string[] = [];
  const touched: HostPlan[] = [];
  const groupUpdates: GroupUpdate[] = [];
  const detachedGroups: string[] = [];
  const scheduleUpdates: ScheduleUpdate[] = [];
  for (const plan of plans) {
    if (!changesHost(plan) && plan.restamped === 0) {
      continue;
    }
    touched.push(plan);
    const rows = state.groups.get(plan.hostId) ?? [];
    const byName = new Map(rows.filter((row) => row.policyId !== null).map((row) => [row.name, row]));
    const idOf = new Map(rows.map((row) => [row.name, row.id]));
    for (const group of plan.config.groups) {
      const row = byName.get(group.name);
      const provenance = { policyId: group.from.id, policyVersion: group.from.version };
      if (!row) {
        const id = deps.ids.ulid(now);
        idOf.set(group.name, id);
        newGroups.push({
          id,
          hostId: plan.hostId,
          name: group.name,
          ...columns(group.settings),
          ...provenance,
          createdAt: now,
          updatedAt: now,
        });
      } else if (
        plan.groups.changed.some((changed) => changed.name === group.name) ||
        row.policyId !== provenance.policyId ||
        row.policyVersion !== provenance.policyVersion
      ) {
        groupUpdates.push({ id: row.id, settings: group.settings, ...provenance });
      }
    }
    for (const name of plan.groups.removed) {
      const id = byName.get(name)?.id;
      if (id !== undefined) {
        deletedGroups.push(id);
      }
    }
    for (const name of plan.groups.detached) {
      const id = byName.get(name)?.id;
      if (id !== undefined) {
        detachedGroups.push(id);
      }
    }
    const existing = new Map(
      (state.policySchedules.get(plan.hostId) ?? []).map((row) => [
        `${row.policyId}/${row.policySchedule}`,
        row,
      ]),
    );
    const kept = new Set<string>();
    const schedulesChanged =
      plan.schedules.added.length + plan.schedules.changed.length + plan.schedules.removed.length > 0 ||
      plan.groups.removed.length > 0;
    for (const schedule of plan.config.schedules) {
      const key = `${schedule.from.id}/${schedule.name}`;
      kept.add(key);
      const row = existing.get(key);
      const fields = {
        cron: schedule.cron,
        enabled: schedule.enabled,
        policyId: schedule.from.id,
        policyVersion: schedule.from.version,
        policySchedule: schedule.name,
      };
      let scheduleId = row?.id;
      if (!scheduleId) {
        scheduleId = deps.ids.ulid(now);
        newSchedules.push({ id: scheduleId, hostId: plan.hostId, ...fields, createdAt: now, updatedAt: now });
      } else if (schedulesChanged || row?.policyVersion !== schedule.from.version) {
        scheduleUpdates.push({ id: scheduleId, ...fields });
      }
      if (schedulesChanged) {
        for (const name of schedule.groups) {
          const groupId = idOf.get(name);
          if (groupId !== undefined) {
            members.push({ scheduleId, sourceGroupId: groupId });
          }
        }
      }
    }
    if (schedulesChanged) {
      rescheduled.push(plan.hostId);
      for (const [key, row] of existing) {
        if (!kept.has(key)) {
          deletedSchedules.push(row.id);
        }
      }
    }
  }
  // Before anything below, as when each row was updated in the loop: the deletes, inserts and
  // overlap marks that follow read or replace these rows.
  await updateGroups(tx, groupUpdates, now);
  for (let i = 0; i < detachedGroups.length; i += BATCH) {
    await tx
      .update(sourceGroups)
      .set({ policyId: null, policyVersion: null, overrides: {}, updatedAt: now })
      .where(inArray(sourceGroups.id, detachedGroups.slice(i, i + BATCH)));
  }
  await updateSchedules(tx, scheduleUpdates, now);
  if (rescheduled.length > 0) {
    // Memberships of the changed hosts' policy schedules are written anew below.
    await tx.delete(scheduleSourceGroups).where(
      inArray(
        scheduleSourceGroups.scheduleId,
        tx
          .select({ id: schedules.id })
          .from(schedules)
          .where(and(inArray(schedules.hostId, rescheduled), isNotNull(schedules.policyId))),
      ),
    );
  }
  if (deletedSchedules.length > 0) {
    await tx.delete(schedules).where(inArray(schedules.id, deletedSchedules));
  }
  if (deletedGroups.length > 0) {
    await tx.delete(sourceGroups).where(inArray(sourceGroups.id, deletedGroups));
  }
  await insertInBatches(newGroups, (batch) => tx.insert(sourceGroups).values(batch));
  await insertInBatches(newSchedules, (batch) => tx.insert(schedules).values(batch));
  await insertInBatches(members, (batch) => tx.insert(scheduleSourceGroups).values(batch));
  if (rescheduled.length > 0) {
    await tx
      .update(hosts)
      .set({ scheduleVersion: sql`${hosts.scheduleVersion} + 1`, updatedAt: now })
      .where(inArray(hosts.id, rescheduled));
  }
  await recomputeTouchedConflicts(tx, touched, now);
  return rescheduled;
}

/** The overlap marks of each touched host's groups, from the rows as they are now. */
async function recomputeTouchedConflicts(
  tx: Database,
  touched: readonly HostPlan[],
  now: Date,
): Promise<void> {
  const changed = touched.filter(changesHost).map((plan) => plan.hostId);
  const marks: Array<{ id: string; dimension: string | null }> = [];
  for (let i = 0; i < changed.length; i += BATCH) {
    const rows = await tx
      .select({
        id: sourceGroups.id,
        hostId: sourceGroups.hostId,
        includes: sourceGroups.includes,
        createdAt: sourceGroups.createdAt,
        current: sourceGroups.conflictDimension,
      })
      .from(sourceGroups)
      .where(inArray(sourceGroups.hostId, changed.slice(i, i + BATCH)));
    const byHost = new Map<string, typeof rows>();
    for (const row of rows) {
      byHost.set(row.hostId, [...(byHost.get(row.hostId) ?? []), row]);
    }
    for (const groups of byHost.values()) {
      groups.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1));
      const dims = computeConflictDimensions(groups);
      for (const group of groups) {
        const next = dims.get(group.id) ?? null;
        if (next !== group.current) {
          marks.push({ id: group.id, dimension: next });
        }
      }
    }
  }
  await updateInBatches(
    tx,
    marks,
    (values) => sql`update source_groups as g set conflict_dimension = v.dimension,
        updated_at = ${timestamp(now)}
      from (values ${values}) as v(id, dimension)
      where g.id = v.id`,
    (mark) => sql`${mark.id}::text, ${mark.dimension}::text`,
  );
}
