/**
 * @module restore/restore-jobs
 * Starts an operator's restore or diff (jobs/start-job.ts): the job (actor `user`), its audit
 * entry in the same transaction, then its command.run. A host that is offline is an outcome the
 * route turns into 503; nothing is left behind.
 * A restore carries the server's signed order (restore-order.ts), which the host's restore
 * helper requires. A restore of another host's snapshot (restore-source.ts) is `kept`: the order
 * names the restoring host and the other host's repository, whose `repo` credential goes ahead of
 * the command for this job alone; the job, its audit entry and its alerts name both hosts.
 */
import type { Job } from "@fleetback/db";
import type { CommandRunDiff, CommandRunRestore } from "@fleetback/protocol";
import type { Actor } from "../auth/actor.js";
import type { ServerDeps } from "../deps.js";
import { readHostCredentials } from "../hosts/credentials.js";
import { mintJobId } from "../jobs/create-job.js";
import { startJob } from "../jobs/start-job.js";
import { signRestoreOrder } from "./restore-order.js";
import { type RestorePlan, targetForJob } from "./restore-request.js";

export type JobDeps = Pick<ServerDeps, "db" | "keys" | "log" | "hub" | "clock" | "ids">;

export type StartOutcome = { ok: true; job: Job } | { ok: false; reason: "offline" };

type RestoreSpec = CommandRunRestore["restore"];

export function restoreCommand(jobId: string, restore: RestoreSpec): CommandRunRestore {
  return { job_id: jobId, kind: "restore", requires_admin_creds: false, restore };
}

export function diffCommand(jobId: string, diff: CommandRunDiff["diff"]): CommandRunDiff {
  return { job_id: jobId, kind: "diff", requires_admin_creds: false, diff };
}

export async function startRestore(
  deps: JobDeps,
  hostId: string,
  plan: RestorePlan,
  actor: Actor,
  ip: string | undefined,
): Promise<StartOutcome> {
  // The id comes first: the target path may name it, and the job row stores the path sent.
  const jobId = mintJobId(deps);
  const targetDir = targetForJob(plan.targetDir, jobId);
  const restore: RestoreSpec = {
    snapshot_id: plan.snapshot.id,
    paths: plan.paths,
    in_place: plan.inPlace,
    target_dir: targetDir,
  };
  // The restore helper runs only what this order says (restore-order.ts); the job row keeps the
  // restore without it.
  const { source } = plan;
  const repository = source?.repository ?? (await readHostCredentials(deps, hostId)).repo;
  const order =
    repository === undefined
      ? undefined
      : signRestoreOrder(deps, { hostId, jobId, repositoryUrl: repository.url, restore });
  // Both hosts by id and by name at the time: the job page and the audit still say whose snapshot
  // it was after a rename or a deletion of the other host.
  const from = source === undefined ? {} : { from_host_id: source.id, from_host_name: source.name };
  const summary = source === undefined ? {} : { summary: source.summary };
  const command = (id: string) => {
    const sent = restoreCommand(id, order === undefined ? restore : { ...restore, order });
    return source === undefined ? sent : { ...sent, kept: true };
  };
  const sent = await startJob(deps, {
    id: jobId,
    kind: "restore",
    hostId,
    actor: { kind: "user", userId: actor.userId },
    params: { ...restore, ...from },
    command,
    ...(source === undefined
      ? {}
      : {
          jobCredentials: (id: string) => [
            { slot: "repo" as const, repository: source.repository, job_id: id },
          ],
        }),
    audit: {
      actor,
      ip,
      action: "host.restore",
      targetKind: "host",
      targetId: hostId,
      details: {
        ...summary,
        snapshot_id: plan.snapshot.id,
        paths: plan.paths,
        in_place: plan.inPlace,
        target_dir: targetDir,
        ...from,
      },
    },
    offline: "refuse",
  });
  return sent.ok ? sent : { ok: false, reason: "offline" };
}

export async function startDiff(
  deps: JobDeps,
  hostId: string,
  snapshots: { a: string; b: string },
  actor: Actor,
  ip: string | undefined,
): Promise<StartOutcome> {
  const diff = { snapshot_a: snapshots.a, snapshot_b: snapshots.b };
  const sent = await startJob(deps, {
    kind: "diff",
    hostId,
    actor: { kind: "user", userId: actor.userId },
    params: { ...diff },
    command: (jobId) => diffCommand(jobId, diff),
    audit: { actor, ip, action: "host.diff", targetKind: "host", targetId: hostId, details: { ...diff } },
    offline: "refuse",
  });
  return sent.ok ? sent : { ok: false, reason: "offline" };
}
