/**
 * @module sources/dispatch-backup
 * One backup of one source group: its `command.run` built from the group (includes, excludes,
 * tag = group name, the group's hooks or the host defaults, the group's bandwidth caps) under a
 * job id minted first, then
 * dispatched. Run-now and schedule fires queue a pending run when the host is offline, to be
 * retried when it is back. The job's params record what was backed up, never the hooks.
 */
import {
  type ActorKind,
  type Database,
  type Host,
  hosts,
  type Job,
  jobs,
  type SourceGroup,
} from "@fleetback/db";
import type { CommandRunBackup } from "@fleetback/protocol";
import { eq } from "drizzle-orm";
import { type AuditContext, writeAudit } from "../audit/audit.js";
import type { ServerDeps } from "../deps.js";
import { createJob, mintJobId } from "../jobs/create-job.js";
import { type CreateAndDispatchResult, createAndDispatchJob, dispatchJob } from "../jobs/dispatch-job.js";
import { HOST_OFFLINE_REASON, queuePendingRun } from "../retries/pending-runs.js";
import { type RunCaps, runCapsParams } from "../retries/run-caps.js";
import { resolveHooks } from "./hooks.js";
import { getGroup } from "./source-groups.js";

export type BackupDeps = Pick<ServerDeps, "db" | "keys" | "log" | "hub" | "clock" | "ids">;

export interface BackupRequest {
  hostId: string;
  actorKind: ActorKind;
  actorUserId?: string | null;
  scheduleId?: string | null;
  /** Which retry this is (0 or absent for the first try). */
  retry?: number;
  /** An operator's caps for this one run (run-now), in place of the group's own. */
  runCaps?: RunCaps;
}

export type BackupOutcome =
  | { outcome: "dispatched"; jobId: string }
  | { outcome: "queued"; pendingRunId: string }
  | { outcome: "offline" };

type HostHooks = Pick<Host, "preHookDefault" | "postHookDefault" | "bandwidthUpKbps" | "bandwidthDownKbps">;
type GroupCaps = Pick<SourceGroup, "bandwidthUpKbps" | "bandwidthDownKbps">;

/**
 * The caps a group's backup runs under, KiB/s, null = none. The group may only tighten the host's
 * cap, never lift it: the host-wide cap is what the host's link can bear. The agent applies a
 * command's cap in place of the host's, so the server sends the stricter of the two, and only when
 * the group has one (else the agent keeps following the host's, also when it changes later).
 */
export function groupJobCaps(
  group: GroupCaps,
  host: Pick<Host, "bandwidthUpKbps" | "bandwidthDownKbps">,
  run: RunCaps = {},
): { up: number | null; down: number | null } {
  const stricter = (own: number | null, hostCap: number | null) =>
    own === null ? null : hostCap === null ? own : Math.min(own, hostCap);
  return {
    up: stricter(run.up ?? group.bandwidthUpKbps, host.bandwidthUpKbps),
    down: stricter(run.down ?? group.bandwidthDownKbps, host.bandwidthDownKbps),
  };
}

export function backupParams(
  group: SourceGroup,
  retry?: number,
  host?: HostHooks,
  runCaps?: RunCaps,
): Record<string, unknown> {
  const caps = host ? groupJobCaps(group, host, runCaps) : { up: null, down: null };
  return {
    tag: group.name,
    includes: group.includes,
    excludes: group.excludes,
    ...(caps.up === null ? {} : { bandwidth_up_kbps: caps.up }),
    ...(caps.down === null ? {} : { bandwidth_down_kbps: caps.down }),
    ...runCapsParams(runCaps),
    ...(retry ? { retry } : {}),
  };
}

export function backupCommand(
  jobId: string,
  group: SourceGroup,
  hooks: Pick<CommandRunBackup, "pre_hook" | "post_hook">,
  host?: HostHooks,
  runCaps?: RunCaps,
): CommandRunBackup {
  const caps = host ? groupJobCaps(group, host, runCaps) : { up: null, down: null };
  return {
    job_id: jobId,
    kind: "backup",
    requires_admin_creds: false,
    includes: group.includes,
    excludes: group.excludes,
    tag: group.name,
    ...(caps.up === null ? {} : { bandwidth_up_kbps: caps.up }),
    ...(caps.down === null ? {} : { bandwidth_down_kbps: caps.down }),
    ...hooks,
  };
}

/** One backup's job row (under a freshly minted id) and the command that describes it. */
function backupOf(deps: BackupDeps, request: BackupRequest, group: SourceGroup, host: HostHooks) {
  const jobId = mintJobId(deps);
  const hooks = resolveHooks(deps.keys.secret, request.hostId, group, host, deps.log);
  return {
    input: {
      id: jobId,
      hostId: request.hostId,
      kind: "backup" as const,
      actorKind: request.actorKind,
      actorUserId: request.actorUserId ?? null,
      scheduledId: request.scheduleId ?? null,
      sourceGroupId: group.id,
      params: backupParams(group, request.retry, host, request.runCaps),
    },
    command: backupCommand(jobId, group, hooks, host, request.runCaps),
  };
}

/** Creates the job and sends its command; no queueing. */
export function sendBackup(
  deps: BackupDeps,
  request: BackupRequest,
  group: SourceGroup,
  host: HostHooks,
): Promise<CreateAndDispatchResult> {
  const { input, command } = backupOf(deps, request, group, host);
  return createAndDispatchJob(deps, input, command);
}

export async function loadHostHooks(deps: { db: Database }, hostId: string): Promise<HostHooks> {
  const [host] = await deps.db
    .select({
      preHookDefault: hosts.preHookDefault,
      postHookDefault: hosts.postHookDefault,
      bandwidthUpKbps: hosts.bandwidthUpKbps,
      bandwidthDownKbps: hosts.bandwidthDownKbps,
    })
    .from(hosts)
    .where(eq(hosts.id, hostId));
  return (
    host ?? { preHookDefault: null, postHookDefault: null, bandwidthUpKbps: null, bandwidthDownKbps: null }
  );
}

/** Run-now and schedule fires: dispatch, or queue a retry when the host is offline. */
export async function runBackup(
  deps: BackupDeps,
  request: BackupRequest,
  group: SourceGroup,
): Promise<BackupOutcome> {
  const host = await loadHostHooks(deps, request.hostId);
  const sent = await sendBackup(deps, request, group, host);
  if (sent.ok) {
    return { outcome: "dispatched", jobId: sent.job.id };
  }
  return queueOfflineBackup(deps, request, group);
}

/**
 * A job row created by the caller (in the transaction that decided to run it) and its command,
 * ready to send: schedule fires create their jobs with the slot's claim, so a server dying between
 * the two cannot leave a claimed slot without a job.
 */
export function plannedBackup(
  deps: BackupDeps,
  request: BackupRequest,
  group: SourceGroup,
  host: HostHooks,
  db: Database,
): Promise<{ job: Job; command: CommandRunBackup }> {
  const { input, command } = backupOf(deps, request, group, host);
  return createJob(deps, input, db).then((job) => ({ job, command }));
}

/** Sends a planned backup; when the host is offline its job row goes and a retry is queued. */
export async function sendPlannedBackup(
  deps: BackupDeps,
  request: BackupRequest,
  group: SourceGroup,
  planned: { job: Job; command: CommandRunBackup },
): Promise<BackupOutcome> {
  const sent = await dispatchJob(deps, planned.job, planned.command);
  if (sent.ok) {
    return { outcome: "dispatched", jobId: planned.job.id };
  }
  await deps.db.delete(jobs).where(eq(jobs.id, planned.job.id));
  return queueOfflineBackup(deps, request, group);
}

async function queueOfflineBackup(
  deps: BackupDeps,
  request: BackupRequest,
  group: SourceGroup,
): Promise<BackupOutcome> {
  const queued = await queuePendingRun(deps, {
    hostId: request.hostId,
    group,
    actorKind: request.actorKind,
    actorUserId: request.actorUserId ?? null,
    scheduleId: request.scheduleId ?? null,
    attemptsMade: 0,
    reason: HOST_OFFLINE_REASON,
    runCaps: request.runCaps,
  });
  if (!queued) {
    return { outcome: "offline" };
  }
  deps.log.info(
    { host_id: request.hostId, source_group_id: group.id, pending_run_id: queued.id },
    "host offline: backup queued for retry",
  );
  return { outcome: "queued", pendingRunId: queued.id };
}

/** An operator's "Run now", audited once it dispatched or queued (an offline answer changed nothing). */
export async function runGroupNow(
  deps: BackupDeps,
  audit: AuditContext,
  hostId: string,
  groupId: string,
  runCaps?: RunCaps,
): Promise<BackupOutcome> {
  const group = await getGroup(deps.db, hostId, groupId);
  const outcome = await runBackup(
    deps,
    { hostId, actorKind: "user", actorUserId: audit.actor.userId, runCaps },
    group,
  );
  if (outcome.outcome !== "offline") {
    await writeAudit(deps.db, deps, {
      ...audit,
      action: "source_group.run",
      targetKind: "source_group",
      targetId: groupId,
      details: {
        host_id: hostId,
        ...runCapsParams(runCaps),
        ...(outcome.outcome === "dispatched"
          ? { job_id: outcome.jobId }
          : { pending_run_id: outcome.pendingRunId }),
      },
    });
  }
  return outcome;
}
