/**
 * @module restore/restore-jobs
 * Starts an operator's restore or diff: the job (actor `user`) and its command.run, then the audit
 * entry. A host that is offline is an outcome the route turns into 503; nothing is left behind.
 */
import { type Job, jobs } from "@fleetback/db";
import { eq } from "drizzle-orm";
import { writeAudit } from "../audit/audit.js";
import type { Actor } from "../auth/actor.js";
import type { ServerDeps } from "../deps.js";
import { createAndDispatchJob } from "../jobs/dispatch-job.js";
import { type RestorePlan, targetForJob } from "./restore-request.js";

type JobDeps = Pick<ServerDeps, "db" | "keys" | "log" | "hub" | "clock" | "ids">;

export type StartOutcome = { ok: true; job: Job } | { ok: false; reason: "offline" };

export async function startRestore(
  deps: JobDeps,
  hostId: string,
  plan: RestorePlan,
  actor: Actor,
  ip: string | undefined,
): Promise<StartOutcome> {
  let targetDir = plan.targetDir;
  const sent = await createAndDispatchJob(
    deps,
    {
      hostId,
      kind: "restore",
      actorKind: "user",
      actorUserId: actor.userId,
      // The job id is not known yet: the template is stored first, the sent path right after.
      params: {
        snapshot_id: plan.snapshot.id,
        paths: plan.paths,
        in_place: plan.inPlace,
        target_dir: plan.targetDir,
      },
    },
    (jobId) => {
      targetDir = targetForJob(plan.targetDir, jobId);
      return {
        job_id: jobId,
        kind: "restore",
        requires_admin_creds: false,
        restore: {
          snapshot_id: plan.snapshot.id,
          paths: plan.paths,
          in_place: plan.inPlace,
          target_dir: targetDir,
        },
      };
    },
  );
  if (!sent.ok) {
    return { ok: false, reason: "offline" };
  }
  const params = { ...sent.job.params, target_dir: targetDir };
  await deps.db.update(jobs).set({ params }).where(eq(jobs.id, sent.job.id));
  await writeAudit(deps.db, deps.clock, {
    actor,
    action: "host.restore",
    targetKind: "host",
    targetId: hostId,
    details: {
      job_id: sent.job.id,
      snapshot_id: plan.snapshot.id,
      paths: plan.paths,
      in_place: plan.inPlace,
      target_dir: targetDir,
    },
    ip,
  });
  return { ok: true, job: { ...sent.job, params } };
}

export async function startDiff(
  deps: JobDeps,
  hostId: string,
  snapshots: { a: string; b: string },
  actor: Actor,
  ip: string | undefined,
): Promise<StartOutcome> {
  const diff = { snapshot_a: snapshots.a, snapshot_b: snapshots.b };
  const sent = await createAndDispatchJob(
    deps,
    { hostId, kind: "diff", actorKind: "user", actorUserId: actor.userId, params: { ...diff } },
    (jobId) => ({ job_id: jobId, kind: "diff", requires_admin_creds: false, diff }),
  );
  if (!sent.ok) {
    return { ok: false, reason: "offline" };
  }
  await writeAudit(deps.db, deps.clock, {
    actor,
    action: "host.diff",
    targetKind: "host",
    targetId: hostId,
    details: { job_id: sent.job.id, ...diff },
    ip,
  });
  return sent;
}
