/**
 * @module sources/dispatch-backup
 * One backup of one source group as a job spec for jobs/start-job.ts: its `command.run` built
 * from the group (includes, excludes, tag = group name, the group's hooks or the host defaults,
 * the group's bandwidth caps). Run-now and schedule fires queue a pending run when the host is
 * offline, to be retried when it is back (retry-ticker.ts), which itself refuses instead. The
 * job's params record what was backed up, never the hooks.
 */
import { type ActorKind, type Database, type Host, hosts, type SourceGroup } from "@fleetback/db";
import type { CommandRunBackup } from "@fleetback/protocol";
import { eq } from "drizzle-orm";
import type { ServerDeps } from "../deps.js";
import type { JobSpec } from "../jobs/start-job.js";
import { HOST_OFFLINE_REASON, queuePendingRun } from "../retries/pending-runs.js";
import { type RunCaps, runCapsParams } from "../retries/run-caps.js";
import { resolveHooks } from "./hooks.js";

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
  /** An offline host: queue a pending run (run-now, schedule fires) or refuse (a retry's own try). */
  offline: "queue" | "refuse";
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
function groupJobCaps(
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

function backupParams(
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

function backupCommand(
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

/** The host columns a backup's command takes (hooks and caps), for a select of its own or a join. */
export const HOST_HOOK_COLUMNS = {
  preHookDefault: hosts.preHookDefault,
  postHookDefault: hosts.postHookDefault,
  bandwidthUpKbps: hosts.bandwidthUpKbps,
  bandwidthDownKbps: hosts.bandwidthDownKbps,
};

export async function loadHostHooks(deps: { db: Database }, hostId: string): Promise<HostHooks> {
  const [host] = await deps.db.select(HOST_HOOK_COLUMNS).from(hosts).where(eq(hosts.id, hostId));
  return (
    host ?? { preHookDefault: null, postHookDefault: null, bandwidthUpKbps: null, bandwidthDownKbps: null }
  );
}

/**
 * The spec of one backup for startJob. Without `host` its params carry no caps and its command
 * must not be built: a given-up retry records its job from the params alone (retry-ticker.ts).
 */
export function backupSpec(
  deps: BackupDeps,
  request: BackupRequest,
  group: SourceGroup,
  host?: HostHooks,
): JobSpec {
  const queue = async (tx: Database) => {
    const queued = await queuePendingRun(
      { ...deps, db: tx },
      {
        hostId: request.hostId,
        group,
        actorKind: request.actorKind,
        actorUserId: request.actorUserId ?? null,
        scheduleId: request.scheduleId ?? null,
        attemptsMade: 0,
        reason: HOST_OFFLINE_REASON,
        runCaps: request.runCaps,
      },
    );
    if (queued !== undefined) {
      deps.log.info(
        { host_id: request.hostId, source_group_id: group.id, pending_run_id: queued.id },
        "host offline: backup queued for retry",
      );
    }
    return queued?.id;
  };
  return {
    kind: "backup",
    hostId: request.hostId,
    actor: { kind: request.actorKind, userId: request.actorUserId ?? null },
    scheduledId: request.scheduleId ?? null,
    sourceGroupId: group.id,
    params: backupParams(group, request.retry, host, request.runCaps),
    command: (jobId) => {
      if (host === undefined) {
        throw new Error("a backup command needs its host's hooks and caps");
      }
      const hooks = resolveHooks(deps.keys.secret, request.hostId, group, host, deps.log);
      return backupCommand(jobId, group, hooks, host, request.runCaps);
    },
    offline: request.offline === "queue" ? { queue } : "refuse",
  };
}
