/**
 * @module policies/apply-plan
 * Writes host plans (fleet-plan.ts) into the hosts' source_groups and schedules rows inside the
 * caller's transaction: new policy groups and schedules in batched inserts, changed ones updated
 * with their new policy version, removed ones deleted (a group a host's own schedule still fires
 * becomes the host's instead), and the schedule version bumped once per host whose schedules
 * changed, so that host, and only it, gets one schedule.set.
 */
import { type Database, hosts, scheduleSourceGroups, schedules, sourceGroups } from "@fleetback/db";
import { and, inArray, isNotNull, sql } from "drizzle-orm";
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
        await tx
          .update(sourceGroups)
          .set({ ...columns(group.settings), ...provenance, updatedAt: now })
          .where(sql`${sourceGroups.id} = ${row.id}`);
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
        await tx
          .update(sourceGroups)
          .set({ policyId: null, policyVersion: null, overrides: {}, updatedAt: now })
          .where(sql`${sourceGroups.id} = ${id}`);
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
        await tx
          .update(schedules)
          .set({ ...fields, updatedAt: now })
          .where(sql`${schedules.id} = ${scheduleId}`);
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
          await tx
            .update(sourceGroups)
            .set({ conflictDimension: next, updatedAt: now })
            .where(sql`${sourceGroups.id} = ${group.id}`);
        }
      }
    }
  }
}
