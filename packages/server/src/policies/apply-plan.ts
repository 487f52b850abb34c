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
import { changedConflictMarks } from "../sources/conflict-dimension.js";
import { sealHook } from "../sources/hooks.js";
import type { GroupSettings } from "./effective-config.js";
import { changesHost, type FleetState, type HostPlan } from "./fleet-plan.js";
import type { HookBook } from "./policy-hooks.js";

const BATCH = 500;

/** A hook as the host's row holds it: sealed for that host (sources/hooks.ts), from its digest. */
function sealedFor(book: HookBook, hostId: string, digest: string | null): Uint8Array | null {
  if (digest === null) {
    return null;
  }
  const text = book.text(digest);
  if (text === undefined) {
    // Every digest planning compares was made by this book from a text it read.
    throw new Error("a planned hook has no text in this planning run");
  }
  return sealHook(book.key, hostId, text);
}

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
 * Rows a statement writes in bulk (updates, memberships), passed as one JSON parameter that
 * jsonb_to_recordset types: at fleet scale a policy edit rewrites a group and a schedule on every
 * host, and a statement per row, or a VALUES list of thousands of parameters that PGlite parses
 * and binds one by one, was most of its time. JSON keeps the types the same on PGlite and on
 * postgres.js, whichever way each driver would send an array.
 */
const BULK = 5000;

async function inBulk<T>(tx: Database, rows: T[], statement: (records: SQL) => SQL): Promise<void> {
  for (let i = 0; i < rows.length; i += BULK) {
    await tx.execute(statement(sql`jsonb_to_recordset(${JSON.stringify(rows.slice(i, i + BULK))}::jsonb)`));
  }
}

const timestamp = (value: Date) => sql`${value.toISOString()}::timestamptz`;

interface GroupUpdate {
  id: string;
  settings: GroupSettings;
  policyId: string;
  policyVersion: number;
  /** Set only for a hook that changed: sealing again what did not would rewrite every row. */
  preHook?: Uint8Array | null;
  postHook?: Uint8Array | null;
}

interface ScheduleUpdate {
  id: string;
  cron: string;
  enabled: boolean;
  policyId: string;
  policyVersion: number;
  policySchedule: string;
}

/** The same columns the per-row `.set(...)` wrote, for every changed group. */
function updateGroups(tx: Database, updates: GroupUpdate[], now: Date): Promise<void> {
  const hex = (sealed: Uint8Array | null | undefined) =>
    sealed === undefined || sealed === null ? null : Buffer.from(sealed).toString("hex");
  const rows = updates.map(({ id, settings, policyId, policyVersion, preHook, postHook }) => {
    const { pre_hook: _pre, post_hook: _post, ...fields } = settings;
    return {
      id,
      ...fields,
      policy_id: policyId,
      policy_version: policyVersion,
      set_pre: preHook !== undefined,
      pre_hook: hex(preHook),
      set_post: postHook !== undefined,
      post_hook: hex(postHook),
    };
  });
  return inBulk(
    tx,
    rows,
    (records) => sql`update source_groups as g set
        includes = v.includes, excludes = v.excludes, retention_policy = v.retention_policy,
        retry_max = v.retry_max, retry_backoff_seconds = v.retry_backoff_seconds,
        grace_seconds = v.grace_seconds, bandwidth_up_kbps = v.bandwidth_up_kbps,
        bandwidth_down_kbps = v.bandwidth_down_kbps, policy_id = v.policy_id,
        policy_version = v.policy_version,
        pre_hook = case when v.set_pre then decode(v.pre_hook, 'hex') else g.pre_hook end,
        post_hook = case when v.set_post then decode(v.post_hook, 'hex') else g.post_hook end,
        updated_at = ${timestamp(now)}
      from ${records} as v(id text, includes jsonb, excludes jsonb, retention_policy jsonb,
        retry_max integer, retry_backoff_seconds integer, grace_seconds integer,
        bandwidth_up_kbps integer, bandwidth_down_kbps integer, policy_id text, policy_version integer,
        set_pre boolean, pre_hook text, set_post boolean, post_hook text)
      where g.id = v.id`,
  );
}

function updateSchedules(tx: Database, updates: ScheduleUpdate[], now: Date): Promise<void> {
  const rows = updates.map((u) => ({
    id: u.id,
    cron: u.cron,
    enabled: u.enabled,
    policy_id: u.policyId,
    policy_version: u.policyVersion,
    policy_schedule: u.policySchedule,
  }));
  return inBulk(
    tx,
    rows,
    (records) => sql`update schedules as s set
        cron = v.cron, enabled = v.enabled, policy_id = v.policy_id,
        policy_version = v.policy_version, policy_schedule = v.policy_schedule,
        updated_at = ${timestamp(now)}
      from ${records} as v(id text, cron text, enabled boolean, policy_id text,
        policy_version integer, policy_schedule text)
      where s.id = v.id`,
  );
}

/** Both lists hold distinct ids (a primary key, a policy's distinct group names). */
function sameMembers(current: readonly string[], wanted: readonly string[]): boolean {
  const set = new Set(current);
  return current.length === wanted.length && wanted.every((id) => set.has(id));
}

/** Applies the plans; returns the ids of the hosts whose schedule set changed (to push). */
export async function applyHostPlans(
  tx: Database,
  deps: { ids: Ids },
  book: HookBook,
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
  const unchangedMembers: string[] = [];
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
          preHook: sealedFor(book, plan.hostId, group.settings.pre_hook),
          postHook: sealedFor(book, plan.hostId, group.settings.post_hook),
          ...provenance,
          createdAt: now,
          updatedAt: now,
        });
      } else {
        const fields = plan.groups.changed.find((changed) => changed.name === group.name)?.fields ?? [];
        if (
          fields.length > 0 ||
          row.policyId !== provenance.policyId ||
          row.policyVersion !== provenance.policyVersion
        ) {
          groupUpdates.push({
            id: row.id,
            settings: group.settings,
            ...provenance,
            ...(fields.includes("pre_hook")
              ? { preHook: sealedFor(book, plan.hostId, group.settings.pre_hook) }
              : {}),
            ...(fields.includes("post_hook")
              ? { postHook: sealedFor(book, plan.hostId, group.settings.post_hook) }
              : {}),
          });
        }
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
        const groupIds = schedule.groups
          .map((name) => idOf.get(name))
          .filter((id): id is string => id !== undefined);
        if (row && sameMembers(row.groupIds, groupIds)) {
          // A cron change leaves the members as they were: rewriting them was a delete and an
          // insert per member on every host for the same rows.
          unchangedMembers.push(row.id);
        } else {
          for (const groupId of groupIds) {
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
    // Memberships of the changed hosts' policy schedules are written anew below, but for those
    // already exactly what the plan gives.
    await tx.delete(scheduleSourceGroups).where(
      and(
        inArray(
          scheduleSourceGroups.scheduleId,
          tx
            .select({ id: schedules.id })
            .from(schedules)
            .where(
              and(
                sql`${schedules.hostId} in (select jsonb_array_elements_text(${JSON.stringify(rescheduled)}::jsonb))`,
                isNotNull(schedules.policyId),
              ),
            ),
        ),
        sql`${scheduleSourceGroups.scheduleId} not in (select jsonb_array_elements_text(${JSON.stringify(unchangedMembers)}::jsonb))`,
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
  await inBulk(
    tx,
    members.map((m) => ({ schedule_id: m.scheduleId, source_group_id: m.sourceGroupId })),
    (records) => sql`insert into schedule_source_groups (schedule_id, source_group_id)
      select v.schedule_id, v.source_group_id from ${records} as v(schedule_id text, source_group_id text)`,
  );
  if (rescheduled.length > 0) {
    await tx
      .update(hosts)
      .set({ scheduleVersion: sql`${hosts.scheduleVersion} + 1`, updatedAt: now })
      .where(sql`${hosts.id} in (select jsonb_array_elements_text(${JSON.stringify(rescheduled)}::jsonb))`);
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
  for (let i = 0; i < changed.length; i += BULK) {
    const rows = await tx
      .select({
        id: sourceGroups.id,
        hostId: sourceGroups.hostId,
        includes: sourceGroups.includes,
        createdAt: sourceGroups.createdAt,
        current: sourceGroups.conflictDimension,
      })
      .from(sourceGroups)
      .where(
        sql`${sourceGroups.hostId} in (select jsonb_array_elements_text(${JSON.stringify(changed.slice(i, i + BULK))}::jsonb))`,
      );
    const byHost = new Map<string, typeof rows>();
    for (const row of rows) {
      const list = byHost.get(row.hostId);
      if (list) {
        list.push(row);
      } else {
        byHost.set(row.hostId, [row]);
      }
    }
    for (const groups of byHost.values()) {
      marks.push(...changedConflictMarks(groups));
    }
  }
  await inBulk(
    tx,
    marks,
    (records) => sql`update source_groups as g set conflict_dimension = v.dimension,
        updated_at = ${timestamp(now)}
      from ${records} as v(id text, dimension text)
      where g.id = v.id`,
  );
}
