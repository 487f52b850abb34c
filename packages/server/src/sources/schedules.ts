/**
 * @module sources/schedules
 * Schedules of a host: a cron expression firing a set of the host's source groups. Every change
 * bumps hosts.schedule_version in the same transaction; the caller pushes `schedule.set` once the
 * transaction has committed (pushScheduleSet), so the agent never sees a version that may roll back.
 */
import {
  type Database,
  hosts,
  type Schedule,
  scheduleSourceGroups,
  schedules,
  sourceGroups,
} from "@fleetback/db";
import { and, asc, eq, inArray, sql } from "drizzle-orm";
import { type AuditContext, writeAudit } from "../audit/audit.js";
import type { ServerDeps } from "../deps.js";
import { conflict, invalid, notFound } from "../errors.js";
import { requireHost } from "../hosts/require-host.js";
import { checkCron } from "./cron.js";
import { policyName } from "./source-groups.js";

export interface ScheduleInput {
  cron: string;
  enabled?: boolean | undefined;
  source_group_ids: string[];
}

export interface ScheduleView extends Schedule {
  sourceGroupIds: string[];
}

export interface ScheduleVersions {
  schedule_version: number;
  schedule_acked_version: number;
}

type ScheduleDeps = Pick<ServerDeps, "db" | "clock" | "ids">;

function auditSchedule(
  tx: Database,
  deps: ScheduleDeps,
  audit: AuditContext,
  action: string,
  hostId: string,
  schedule: { id: string; cron: string; enabled: boolean },
): Promise<void> {
  return writeAudit(tx, deps, {
    ...audit,
    action,
    targetKind: "schedule",
    targetId: schedule.id,
    details: { host_id: hostId, cron: schedule.cron, enabled: schedule.enabled },
  });
}

function validated(input: ScheduleInput): { cron: string; groupIds: string[] } {
  const cron = checkCron(input.cron);
  if (!cron.ok) {
    throw invalid(cron.message, [{ field: "cron", message: cron.message.replace(/^cron: /, "") }]);
  }
  const groupIds = [...new Set(input.source_group_ids)];
  if (groupIds.length === 0) {
    throw invalid("source_group_ids: choose at least one source group", [
      { field: "source_group_ids", message: "choose at least one source group" },
    ]);
  }
  return { cron: cron.cron, groupIds };
}

async function assertGroupsOfHost(tx: Database, hostId: string, groupIds: string[]): Promise<void> {
  const found = await tx
    .select({ id: sourceGroups.id })
    .from(sourceGroups)
    .where(and(eq(sourceGroups.hostId, hostId), inArray(sourceGroups.id, groupIds)));
  if (found.length !== groupIds.length) {
    const known = new Set(found.map((row) => row.id));
    const foreign = groupIds.filter((id) => !known.has(id));
    throw invalid(`source_group_ids: not source groups of this host: ${foreign.join(", ")}`, [
      { field: "source_group_ids", message: "every group must belong to this host" },
    ]);
  }
}

/** A policy's schedule is the policy's: a host-side edit would be undone by its next version. */
async function refusePolicySchedule(db: Database, schedule: ScheduleView): Promise<void> {
  if (schedule.policyId !== null) {
    throw conflict(
      `This schedule is ${schedule.policySchedule ?? "a schedule"} of policy ${await policyName(db, schedule.policyId)}: change it in the policy, or the host's labels so that the policy no longer covers it.`,
    );
  }
}

async function bumpVersion(tx: Database, hostId: string, now: Date): Promise<void> {
  await tx
    .update(hosts)
    .set({ scheduleVersion: sql`${hosts.scheduleVersion} + 1`, updatedAt: now })
    .where(eq(hosts.id, hostId));
}

export async function scheduleVersions(db: Database, hostId: string): Promise<ScheduleVersions> {
  const host = await requireHost(db, hostId);
  return { schedule_version: host.scheduleVersion, schedule_acked_version: host.scheduleAckedVersion };
}

export async function listSchedules(db: Database, hostId: string): Promise<ScheduleView[]> {
  await requireHost(db, hostId);
  const rows = await db
    .select()
    .from(schedules)
    .where(eq(schedules.hostId, hostId))
    .orderBy(asc(schedules.createdAt), asc(schedules.id));
  const members =
    rows.length === 0
      ? []
      : await db
          .select()
          .from(scheduleSourceGroups)
          .where(
            inArray(
              scheduleSourceGroups.scheduleId,
              rows.map((row) => row.id),
            ),
          )
          .orderBy(asc(scheduleSourceGroups.sourceGroupId));
  return rows.map((row) => ({
    ...row,
    sourceGroupIds: members.filter((m) => m.scheduleId === row.id).map((m) => m.sourceGroupId),
  }));
}

export async function getSchedule(db: Database, hostId: string, scheduleId: string): Promise<ScheduleView> {
  const found = (await listSchedules(db, hostId)).find((row) => row.id === scheduleId);
  if (!found) {
    throw notFound(`No schedule ${scheduleId} on host ${hostId}`);
  }
  return found;
}

export async function createSchedule(
  deps: ScheduleDeps,
  audit: AuditContext,
  hostId: string,
  input: ScheduleInput,
): Promise<ScheduleView> {
  const { cron, groupIds } = validated(input);
  await requireHost(deps.db, hostId);
  const now = deps.clock.now();
  const id = deps.ids.ulid(now);
  await deps.db.transaction(async (tx) => {
    await assertGroupsOfHost(tx, hostId, groupIds);
    await tx
      .insert(schedules)
      .values({ id, hostId, cron, enabled: input.enabled ?? true, createdAt: now, updatedAt: now });
    await tx
      .insert(scheduleSourceGroups)
      .values(groupIds.map((sourceGroupId) => ({ scheduleId: id, sourceGroupId })));
    await bumpVersion(tx, hostId, now);
    await auditSchedule(tx, deps, audit, "schedule.create", hostId, {
      id,
      cron,
      enabled: input.enabled ?? true,
    });
  });
  return getSchedule(deps.db, hostId, id);
}

export async function updateSchedule(
  deps: ScheduleDeps,
  audit: AuditContext,
  hostId: string,
  scheduleId: string,
  input: ScheduleInput,
): Promise<ScheduleView> {
  const { cron, groupIds } = validated(input);
  const current = await getSchedule(deps.db, hostId, scheduleId);
  await refusePolicySchedule(deps.db, current);
  const now = deps.clock.now();
  await deps.db.transaction(async (tx) => {
    await assertGroupsOfHost(tx, hostId, groupIds);
    await tx
      .update(schedules)
      .set({ cron, enabled: input.enabled ?? current.enabled, updatedAt: now })
      .where(and(eq(schedules.id, scheduleId), eq(schedules.hostId, hostId)));
    await tx.delete(scheduleSourceGroups).where(eq(scheduleSourceGroups.scheduleId, scheduleId));
    await tx
      .insert(scheduleSourceGroups)
      .values(groupIds.map((sourceGroupId) => ({ scheduleId, sourceGroupId })));
    await bumpVersion(tx, hostId, now);
    await auditSchedule(tx, deps, audit, "schedule.update", hostId, {
      id: scheduleId,
      cron,
      enabled: input.enabled ?? current.enabled,
    });
  });
  return getSchedule(deps.db, hostId, scheduleId);
}

export async function deleteSchedule(
  deps: ScheduleDeps,
  audit: AuditContext,
  hostId: string,
  scheduleId: string,
): Promise<ScheduleView> {
  const current = await getSchedule(deps.db, hostId, scheduleId);
  await refusePolicySchedule(deps.db, current);
  await deps.db.transaction(async (tx) => {
    await tx.delete(schedules).where(and(eq(schedules.id, scheduleId), eq(schedules.hostId, hostId)));
    await bumpVersion(tx, hostId, deps.clock.now());
    await auditSchedule(tx, deps, audit, "schedule.delete", hostId, current);
  });
  return current;
}

export function scheduleJson(schedule: ScheduleView) {
  return {
    id: schedule.id,
    host_id: schedule.hostId,
    cron: schedule.cron,
    enabled: schedule.enabled,
    source_group_ids: schedule.sourceGroupIds,
    created_at: schedule.createdAt,
    updated_at: schedule.updatedAt,
  };
}
