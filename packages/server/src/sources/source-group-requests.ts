/**
 * @module sources/source-group-requests
 * What the sources page's forms and their JSON twins both ask of a source group: create, change
 * and run it now. The checks on who may do what live here once, so the page and the API cannot
 * drift apart: hooks run as root on the host and lowering a retention policy destroys history, so
 * both are an admin's decision; a run-now that can be neither sent nor queued answers 503.
 */
import type { SourceGroup } from "@fleetback/db";
import type { AuditContext } from "../audit/audit.js";
import { type Actor, hasRole } from "../auth/actor.js";
import { forbidden, unavailable } from "../errors.js";
import { requireHost } from "../hosts/require-host.js";
import { startJob } from "../jobs/start-job.js";
import { runCapsParams } from "../retries/run-caps.js";
import { type BackupDeps, type BackupOutcome, backupSpec, loadHostHooks } from "./dispatch-backup.js";
import { type RetentionChange, retentionChange } from "./retention-change.js";
import {
  type CreateGroupBody,
  HOOK_FIELDS,
  type RunNowBody,
  type UpdateGroupBody,
} from "./source-group-schema.js";
import { createGroup, getGroup, updateGroup } from "./source-groups.js";

/** Non-admins may not set or read hooks; a body naming one is refused outright. */
function refuseHooksUnlessAdmin(actor: Actor, body: Record<string, unknown>, fields: readonly string[]) {
  if (!hasRole(actor, "admin") && fields.some((field) => body[field] !== undefined)) {
    throw forbidden("Hooks run as root on the host: only an admin may set them.");
  }
}

/**
 * Lowering a retention policy makes the next forget (and prune) destroy history that cannot be
 * brought back: an admin's decision, never an operator's. Returns the change for the audit.
 */
async function checkRetention(
  deps: BackupDeps,
  actor: Actor,
  hostId: string,
  current: SourceGroup | undefined,
  body: CreateGroupBody | UpdateGroupBody,
): Promise<RetentionChange | undefined> {
  if (current === undefined) {
    await requireHost(deps.db, hostId);
  }
  const change = await retentionChange(deps.db, hostId, current, body);
  if (change !== undefined && change.lowered.length > 0 && !hasRole(actor, "admin")) {
    throw forbidden(
      `retention_policy: lowering ${change.lowered.map((key) => `keep ${key}`).join(", ")} makes forget and prune remove snapshots for good; only an admin may lower a retention policy`,
    );
  }
  return change;
}

export async function createGroupFor(
  deps: BackupDeps,
  audit: AuditContext,
  hostId: string,
  body: CreateGroupBody,
) {
  refuseHooksUnlessAdmin(audit.actor, body, HOOK_FIELDS);
  const change = await checkRetention(deps, audit.actor, hostId, undefined, body);
  return createGroup(deps, audit, hostId, body, change);
}

export async function updateGroupFor(
  deps: BackupDeps,
  audit: AuditContext,
  hostId: string,
  groupId: string,
  body: UpdateGroupBody,
) {
  refuseHooksUnlessAdmin(audit.actor, body, HOOK_FIELDS);
  const change = await checkRetention(
    deps,
    audit.actor,
    hostId,
    await getGroup(deps.db, hostId, groupId),
    body,
  );
  return updateGroup(deps, audit, hostId, groupId, body, change);
}

/** An operator's "Run now", audited in the transaction that started or queued it. */
export async function runGroupNowFor(
  deps: BackupDeps,
  audit: AuditContext,
  hostId: string,
  groupId: string,
  body: RunNowBody = {},
): Promise<BackupOutcome & { outcome: "dispatched" | "queued" }> {
  const group = await getGroup(deps.db, hostId, groupId);
  const runCaps = { up: body.bandwidth_up_kbps ?? null, down: body.bandwidth_down_kbps ?? null };
  const request = { hostId, actorKind: "user" as const, actorUserId: audit.actor.userId, runCaps };
  const spec = backupSpec(deps, { ...request, offline: "queue" }, group, await loadHostHooks(deps, hostId));
  const started = await startJob(deps, {
    ...spec,
    audit: {
      ...audit,
      action: "source_group.run",
      targetKind: "source_group",
      targetId: groupId,
      details: { host_id: hostId, ...runCapsParams(runCaps) },
    },
  });
  if (started.ok) {
    return { outcome: "dispatched", jobId: started.job.id };
  }
  if (started.pendingRunId !== undefined) {
    return { outcome: "queued", pendingRunId: started.pendingRunId };
  }
  throw unavailable(
    "The host is offline and this group allows no retries (retry_max 0); nothing was queued.",
  );
}
