/**
 * @module mirror/mirror-upkeep
 * The mirror follows the host's repository: when a forget, prune or check succeeds there, the
 * same job runs on the mirror (`on_mirror`, protocol 8) with the same policies: forget by the
 * groups' retention (so the mirror keeps what the repository keeps), prune with the mirror's own
 * login, check with the same read-data subset. It runs after the repository's job, never before:
 * a forget on the mirror first would drop snapshots the next copy would bring back.
 */

import type { JobKind } from "@fleetback/db";
import { hosts } from "@fleetback/db";
import type { CommandRun } from "@fleetback/protocol";
import { eq } from "drizzle-orm";
import { startJob } from "../jobs/start-job.js";
import { forgetGroupsOf } from "../maintenance/maintenance-jobs.js";
import { type CopyDeps, hasMirror, speaksMirror } from "./mirror-copy.js";

export const MIRROR_UPKEEP_KINDS: readonly JobKind[] = ["forget", "prune", "check"];

export interface FinishedJob {
  id: string;
  kind: JobKind;
  params: Record<string, unknown>;
}

/**
 * The command the same job runs on the mirror, its job id still to fill in; undefined when there
 * is nothing to run.
 */
async function upkeepCommand(
  deps: CopyDeps,
  hostId: string,
  job: FinishedJob,
): Promise<CommandRun | undefined> {
  const common = { job_id: "", requires_admin_creds: false, on_mirror: true } as const;
  switch (job.kind) {
    case "forget": {
      const groups = await forgetGroupsOf(deps.db, hostId);
      return groups.length === 0 ? undefined : { ...common, kind: "forget", forget_groups: groups };
    }
    case "prune":
      return { ...common, kind: "prune" };
    case "check": {
      const subset = job.params.read_data_subset;
      return {
        ...common,
        kind: "check",
        check: typeof subset === "string" && subset !== "" ? { read_data_subset: subset } : {},
      };
    }
    default:
      return undefined;
  }
}

/**
 * After a forget, prune or check succeeded on the host's repository: the same on the mirror, if
 * the host has one and its agent can. Never throws; what did not start is logged.
 */
export async function upkeepMirrorAfter(deps: CopyDeps, hostId: string, job: FinishedJob): Promise<void> {
  // A forget of chosen snapshots is an operator's one-off on the repository, not a policy.
  if (
    !MIRROR_UPKEEP_KINDS.includes(job.kind) ||
    job.params.on_mirror === true ||
    job.params.snapshot_ids !== undefined
  ) {
    return;
  }
  try {
    if (!(await hasMirror(deps.db, hostId))) {
      return;
    }
    const [host] = await deps.db
      .select({ protocolVersion: hosts.protocolVersion })
      .from(hosts)
      .where(eq(hosts.id, hostId));
    if (!speaksMirror(host?.protocolVersion ?? null)) {
      return;
    }
    const command = await upkeepCommand(deps, hostId, job);
    if (command === undefined) {
      return;
    }
    const sent = await startJob(deps, {
      kind: job.kind,
      hostId,
      actor: { kind: "system" },
      params: { on_mirror: true, after_job_id: job.id },
      command: (jobId) => ({ ...command, job_id: jobId }) as CommandRun,
      offline: "refuse",
    });
    if (sent.ok) {
      deps.log.info(
        { host_id: hostId, job_id: sent.job.id, kind: job.kind, after: job.id },
        "mirror upkeep started",
      );
    } else {
      deps.log.warn({ host_id: hostId, kind: job.kind, reason: sent.reason }, "mirror upkeep not started");
    }
  } catch (err) {
    deps.log.error({ err, host_id: hostId, kind: job.kind }, "could not start the mirror upkeep");
  }
}
