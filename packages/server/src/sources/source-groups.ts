/**
 * @module sources/source-groups
 * Source groups of a host: what is backed up, under which tag, kept how long, retried how often.
 * Every write recomputes the conflict dimension of all the host's groups in the same transaction.
 * A duplicate name is the database's unique constraint, turned into a 409 naming `name`; a group
 * still fired by a schedule cannot be deleted (409 listing those schedules); an include in the
 * agent's own directories is refused (400, hosts/agent-dirs.ts).
 */
import {
  type Database,
  hosts,
  isUniqueViolation,
  policies,
  type RetentionPolicy,
  type SourceGroup,
  scheduleSourceGroups,
  schedules,
  sourceGroups,
} from "@fleetback/db";
import { and, asc, eq } from "drizzle-orm";
import { type AuditContext, writeAudit } from "../audit/audit.js";
import type { ServerDeps } from "../deps.js";
import { conflict, notFound } from "../errors.js";
import { agentDirsOf, refuseAgentDirPaths } from "../hosts/agent-dirs.js";
import { requireHost } from "../hosts/require-host.js";
import { changedConflictMarks } from "./conflict-dimension.js";
import { openHook, sealHook } from "./hooks.js";
import { type RetentionChange, retentionDetails } from "./retention-change.js";
import {
  type CreateGroupBody,
  GROUP_SETTING_KEYS,
  HOOK_FIELDS,
  type HostHooksBody,
  type UpdateGroupBody,
} from "./source-group-schema.js";

type GroupDeps = Pick<ServerDeps, "db" | "clock" | "keys" | "ids">;

const NAME_CONSTRAINT = "source_groups_host_id_name_key";

export async function listGroups(db: Database, hostId: string): Promise<SourceGroup[]> {
  await requireHost(db, hostId);
  return db
    .select()
    .from(sourceGroups)
    .where(eq(sourceGroups.hostId, hostId))
    .orderBy(asc(sourceGroups.name));
}

export async function getGroup(db: Database, hostId: string, groupId: string): Promise<SourceGroup> {
  const [group] = await db
    .select()
    .from(sourceGroups)
    .where(and(eq(sourceGroups.id, groupId), eq(sourceGroups.hostId, hostId)))
    .limit(1);
  if (!group) {
    throw notFound(`No source group ${groupId} on host ${hostId}`);
  }
  return group;
}

/** A policy's name for a refusal naming it (its id if it is gone meanwhile). */
export async function policyName(db: Database, policyId: string): Promise<string> {
  const [row] = await db.select({ name: policies.name }).from(policies).where(eq(policies.id, policyId));
  return row?.name ?? policyId;
}

/**
 * For a policy's group (policies/): the settings this edit sets become the host's overrides, kept
 * over every next version of the policy; its name is the policy's. Undefined for a host's own group.
 * A hook the edit changes is marked `true` there, never its text (that stays sealed in the row);
 * a form sending the hook it already has marks nothing.
 */
async function policyOverrides(
  db: Database,
  key: Uint8Array,
  group: SourceGroup,
  body: UpdateGroupBody,
): Promise<Record<string, unknown> | undefined> {
  if (group.policyId === null) {
    return undefined;
  }
  if (body.name !== undefined && body.name !== group.name) {
    throw conflict(
      `name: the source group ${group.name} comes from policy ${await policyName(db, group.policyId)}, whose name it keeps`,
      { field: "name" },
    );
  }
  const set = GROUP_SETTING_KEYS.filter((field) => body[field] !== undefined).map((field) => [
    field,
    body[field],
  ]);
  const current = { pre_hook: group.preHook, post_hook: group.postHook };
  const hooks = HOOK_FIELDS.filter((field) => {
    const given = body[field];
    return (
      given !== undefined &&
      (given === "" ? null : given) !== (openHook(key, group.hostId, current[field]) ?? null)
    );
  }).map((field) => [field, true]);
  return { ...group.overrides, ...Object.fromEntries(set), ...Object.fromEntries(hooks) };
}

/** Recomputes conflict_dimension of every group of the host; `tx` is the caller's transaction. */
export async function recomputeConflicts(tx: Database, hostId: string, now: Date): Promise<void> {
  const groups = await tx
    .select({
      id: sourceGroups.id,
      includes: sourceGroups.includes,
      createdAt: sourceGroups.createdAt,
      current: sourceGroups.conflictDimension,
    })
    .from(sourceGroups)
    .where(eq(sourceGroups.hostId, hostId));
  for (const mark of changedConflictMarks(groups)) {
    await tx
      .update(sourceGroups)
      .set({ conflictDimension: mark.dimension, updatedAt: now })
      .where(eq(sourceGroups.id, mark.id));
  }
}

async function nameConflictAware<T>(name: string | undefined, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (isUniqueViolation(err, NAME_CONSTRAINT)) {
      throw conflict(`name: this host already has a source group named ${name ?? "so"}`, {
        field: "name",
      });
    }
    throw err;
  }
}

/**
 * Runs `write` (the group's insert or update) in one transaction with the host's conflict marks
 * and the audit entry, then reads the group back. `retention` is for the audit entry too.
 */
async function saveGroup(
  deps: GroupDeps,
  audit: AuditContext,
  target: { hostId: string; groupId: string; now: Date; action: string },
  body: CreateGroupBody | UpdateGroupBody,
  retention: RetentionChange | undefined,
  write: (tx: Database) => Promise<unknown>,
): Promise<SourceGroup> {
  const { hostId, groupId, now } = target;
  await nameConflictAware(body.name, () =>
    deps.db.transaction(async (tx) => {
      await write(tx);
      await recomputeConflicts(tx, hostId, now);
      await writeAudit(tx, deps, {
        ...audit,
        action: target.action,
        targetKind: "source_group",
        targetId: groupId,
        details: { host_id: hostId, fields: Object.keys(body), ...retentionDetails(retention) },
      });
    }),
  );
  return getGroup(deps.db, hostId, groupId);
}

function hookColumns(
  deps: GroupDeps,
  hostId: string,
  body: { pre_hook?: string | null; post_hook?: string | null },
) {
  const set: { preHook?: Uint8Array | null; postHook?: Uint8Array | null } = {};
  if (body.pre_hook !== undefined) {
    set.preHook = sealHook(deps.keys.secret, hostId, body.pre_hook);
  }
  if (body.post_hook !== undefined) {
    set.postHook = sealHook(deps.keys.secret, hostId, body.post_hook);
  }
  return set;
}

/** `retention` is what the caller found the group does to its tag's policy, for the audit entry. */
export async function createGroup(
  deps: GroupDeps,
  audit: AuditContext,
  hostId: string,
  body: CreateGroupBody,
  retention?: RetentionChange,
): Promise<SourceGroup> {
  const host = await requireHost(deps.db, hostId);
  // A folder above them (/, /etc) stays allowed: the agent excludes its directories from backups.
  refuseAgentDirPaths("includes", body.includes, agentDirsOf(host));
  const now = deps.clock.now();
  const id = deps.ids.ulid(now);
  return saveGroup(
    deps,
    audit,
    { hostId, groupId: id, now, action: "source_group.create" },
    body,
    retention,
    (tx) =>
      tx.insert(sourceGroups).values({
        id,
        hostId,
        name: body.name,
        includes: body.includes,
        excludes: body.excludes ?? [],
        retentionPolicy: (body.retention_policy ?? {}) as RetentionPolicy,
        ...(body.retry_max === undefined ? {} : { retryMax: body.retry_max }),
        ...(body.retry_backoff_seconds === undefined
          ? {}
          : { retryBackoffSeconds: body.retry_backoff_seconds }),
        graceSeconds: body.grace_seconds ?? null,
        bandwidthUpKbps: body.bandwidth_up_kbps ?? null,
        bandwidthDownKbps: body.bandwidth_down_kbps ?? null,
        ...hookColumns(deps, hostId, body),
        createdAt: now,
        updatedAt: now,
      }),
  );
}

export async function updateGroup(
  deps: GroupDeps,
  audit: AuditContext,
  hostId: string,
  groupId: string,
  body: UpdateGroupBody,
  retention?: RetentionChange,
): Promise<SourceGroup> {
  const group = await getGroup(deps.db, hostId, groupId);
  const overrides = await policyOverrides(deps.db, deps.keys.secret, group, body);
  if (body.includes !== undefined) {
    refuseAgentDirPaths("includes", body.includes, agentDirsOf(await requireHost(deps.db, hostId)));
  }
  const now = deps.clock.now();
  const target = { hostId, groupId, now, action: "source_group.update" };
  return saveGroup(deps, audit, target, body, retention, (tx) =>
    tx
      .update(sourceGroups)
      .set({
        ...(body.name === undefined ? {} : { name: body.name }),
        ...(body.includes === undefined ? {} : { includes: body.includes }),
        ...(body.excludes === undefined ? {} : { excludes: body.excludes }),
        ...(body.retention_policy === undefined
          ? {}
          : { retentionPolicy: body.retention_policy as RetentionPolicy }),
        ...(body.retry_max === undefined ? {} : { retryMax: body.retry_max }),
        ...(body.retry_backoff_seconds === undefined
          ? {}
          : { retryBackoffSeconds: body.retry_backoff_seconds }),
        ...(body.grace_seconds === undefined ? {} : { graceSeconds: body.grace_seconds }),
        ...(body.bandwidth_up_kbps === undefined ? {} : { bandwidthUpKbps: body.bandwidth_up_kbps }),
        ...(body.bandwidth_down_kbps === undefined ? {} : { bandwidthDownKbps: body.bandwidth_down_kbps }),
        ...hookColumns(deps, hostId, body),
        ...(overrides === undefined ? {} : { overrides }),
        updatedAt: now,
      })
      .where(and(eq(sourceGroups.id, groupId), eq(sourceGroups.hostId, hostId))),
  );
}

/** Refuses (409, nothing deleted) while schedules still fire the group. */
export async function deleteGroup(
  deps: GroupDeps,
  audit: AuditContext,
  hostId: string,
  groupId: string,
): Promise<SourceGroup> {
  const group = await getGroup(deps.db, hostId, groupId);
  if (group.policyId !== null) {
    throw conflict(
      `The source group ${group.name} comes from policy ${await policyName(deps.db, group.policyId)}: change the policy, or the host's labels so that it no longer matches.`,
    );
  }
  await deps.db.transaction(async (tx) => {
    const referencing = await tx
      .select({ id: schedules.id, cron: schedules.cron })
      .from(scheduleSourceGroups)
      .innerJoin(schedules, eq(schedules.id, scheduleSourceGroups.scheduleId))
      .where(eq(scheduleSourceGroups.sourceGroupId, groupId))
      .orderBy(asc(schedules.id));
    if (referencing.length > 0) {
      throw conflict(
        `The source group ${group.name} is used by ${referencing.length} schedule(s); remove it from them first.`,
        { schedules: referencing },
      );
    }
    await tx.delete(sourceGroups).where(and(eq(sourceGroups.id, groupId), eq(sourceGroups.hostId, hostId)));
    await recomputeConflicts(tx, hostId, deps.clock.now());
    await writeAudit(tx, deps, {
      ...audit,
      action: "source_group.delete",
      targetKind: "source_group",
      targetId: group.id,
      details: { host_id: hostId, name: group.name },
    });
  });
  return group;
}

/** Host default hooks; absent fields keep their value, null or "" clears. */
export async function setHostHooks(
  deps: GroupDeps,
  audit: AuditContext,
  hostId: string,
  body: HostHooksBody,
) {
  await requireHost(deps.db, hostId);
  const set: { preHookDefault?: Uint8Array | null; postHookDefault?: Uint8Array | null } = {};
  if (body.pre_hook_default !== undefined) {
    set.preHookDefault = sealHook(deps.keys.secret, hostId, body.pre_hook_default);
  }
  if (body.post_hook_default !== undefined) {
    set.postHookDefault = sealHook(deps.keys.secret, hostId, body.post_hook_default);
  }
  const row = await deps.db.transaction(async (tx) => {
    const [updated] = await tx
      .update(hosts)
      .set({ ...set, updatedAt: deps.clock.now() })
      .where(eq(hosts.id, hostId))
      .returning({ pre: hosts.preHookDefault, post: hosts.postHookDefault });
    await writeAudit(tx, deps, {
      ...audit,
      action: "host.hooks.update",
      targetKind: "host",
      targetId: hostId,
      details: { fields: Object.keys(body) },
    });
    return updated;
  });
  return { has_pre_hook_default: row?.pre != null, has_post_hook_default: row?.post != null };
}

/** The API shape. Hook text only when `showHooks` (admins); everyone sees whether one is set. */
export function groupJson(group: SourceGroup, options: { showHooks: boolean; key: Uint8Array }) {
  const json: Record<string, unknown> = {
    id: group.id,
    host_id: group.hostId,
    name: group.name,
    includes: group.includes,
    excludes: group.excludes,
    retention_policy: group.retentionPolicy,
    retry_max: group.retryMax,
    retry_backoff_seconds: group.retryBackoffSeconds,
    grace_seconds: group.graceSeconds,
    bandwidth_up_kbps: group.bandwidthUpKbps,
    bandwidth_down_kbps: group.bandwidthDownKbps,
    conflict_dimension: group.conflictDimension,
    has_pre_hook: group.preHook !== null,
    has_post_hook: group.postHook !== null,
    created_at: group.createdAt,
    updated_at: group.updatedAt,
  };
  if (options.showHooks) {
    json.pre_hook = openHook(options.key, group.hostId, group.preHook) ?? null;
    json.post_hook = openHook(options.key, group.hostId, group.postHook) ?? null;
  }
  return json;
}
