/**
 * @module maintenance/maintenance-jobs
 * Repository jobs that are not backups: forget, prune, check, drill (the maintenance cadences,
 * actor `system`) and the same plus unlock and init started by an operator (`POST /api/hosts/{id}/jobs`,
 * the host page's buttons). Forget carries one entry per source group with a non-empty retention
 * policy; prune and unlock need the admin credentials, which the dispatch pushes first.
 */
import { type ActorKind, type Database, hosts, type Job, jobs, sourceGroups } from "@fleetback/db";
import type { CommandRun, ForgetGroup } from "@fleetback/protocol";
import { and, asc, eq, inArray } from "drizzle-orm";
import type { AuditContext } from "../audit/audit.js";
import type { ServerDeps } from "../deps.js";
import { conflict, unavailable } from "../errors.js";
import { isDeletionHeld, openHold } from "../holds/deletion-holds.js";
import { LOGIN_NEEDS_UPGRADE } from "../hosts/login-password-gate.js";
import type { DispatchFailure } from "../jobs/dispatch-job.js";
import { sharedRepositoryOldAgentMessage } from "../jobs/owner-command.js";
import { type JobAudit, startJob } from "../jobs/start-job.js";
import { keeperOf } from "../keepers/keeper-of.js";
import { planHostRetention, type RetentionPlanParams } from "../retention/host-retention.js";
import { recordSuspects } from "../retention/suspect-alert.js";
import { type DrillTarget, drillPlanOf } from "./drill-plan.js";
import { getMaintenance } from "./maintenance-record.js";

export const MANUAL_JOB_KINDS = ["forget", "prune", "check", "unlock", "init", "drill"] as const;
export type ManualJobKind = (typeof MANUAL_JOB_KINDS)[number];

type JobDeps = Pick<ServerDeps, "db" | "keys" | "log" | "hub" | "clock" | "ids" | "notifier"> & {
  config: Pick<ServerDeps["config"], "timeZone" | "forgetHoldShare">;
};

/** `{tag, keep}` of every group of the host whose policy sets at least one key. */
export async function forgetGroupsOf(db: Database, hostId: string): Promise<ForgetGroup[]> {
  const groups = await db
    .select({ name: sourceGroups.name, policy: sourceGroups.retentionPolicy })
    .from(sourceGroups)
    .where(eq(sourceGroups.hostId, hostId))
    .orderBy(asc(sourceGroups.name));
  return groups
    .filter((group) => Object.keys(group.policy).length > 0)
    .map((group) => ({ tag: group.name, keep: { ...group.policy } }));
}

export interface MaintenancePlan {
  kind: ManualJobKind;
  forgetGroups?: ForgetGroup[];
  readDataSubset?: string;
  /** Set for a drill (drill-plan.ts decides it). */
  drill?: DrillTarget;
  /**
   * A protected host's forget (keepers/): the ids the server's plan removes, and the plan, which
   * the job's params show. Set by dispatchMaintenance.
   */
  planned?: { snapshotIds: string[]; plan: RetentionPlanParams };
}

function commandOf(plan: MaintenancePlan, jobId: string): CommandRun {
  switch (plan.kind) {
    case "forget":
      return plan.planned === undefined
        ? {
            job_id: jobId,
            kind: "forget",
            requires_admin_creds: false,
            forget_groups: plan.forgetGroups ?? [],
          }
        : {
            job_id: jobId,
            kind: "forget",
            requires_admin_creds: false,
            forget_groups: [],
            snapshot_ids: plan.planned.snapshotIds,
          };
    case "prune":
      return { job_id: jobId, kind: "prune", requires_admin_creds: true };
    case "check":
      return {
        job_id: jobId,
        kind: "check",
        requires_admin_creds: false,
        check: plan.readDataSubset ? { read_data_subset: plan.readDataSubset } : {},
      };
    case "unlock":
      return { job_id: jobId, kind: "unlock", requires_admin_creds: true };
    case "init":
      return { job_id: jobId, kind: "init", requires_admin_creds: false };
    case "drill": {
      if (plan.drill === undefined) {
        throw new Error("a drill plan without its snapshot");
      }
      return {
        job_id: jobId,
        kind: "drill",
        requires_admin_creds: false,
        drill: { snapshot_id: plan.drill.snapshotId, sample_files: plan.drill.sampleFiles },
      };
    }
  }
}

/** What the job page shows of the command: never credentials. */
function paramsOf(plan: MaintenancePlan): Record<string, unknown> {
  if (plan.kind === "forget") {
    return plan.planned === undefined
      ? { forget_groups: plan.forgetGroups ?? [] }
      : {
          forget_groups: plan.forgetGroups ?? [],
          snapshot_ids: plan.planned.snapshotIds,
          retention_plan: plan.planned.plan,
        };
  }
  if (plan.kind === "check") {
    return { read_data_subset: plan.readDataSubset ?? "" };
  }
  if (plan.kind === "drill" && plan.drill !== undefined) {
    return { snapshot_id: plan.drill.snapshotId, sample_files: plan.drill.sampleFiles };
  }
  return {};
}

export type MaintenanceDispatch =
  | { ok: true; job: Job }
  | { ok: false; reason: DispatchFailure }
  // A protected host's forget planned by the server: nothing to remove, or a policy it refused.
  | { ok: false; reason: "nothing_to_forget" | "retention_refused"; message: string }
  // The plan removes more than FLEETBACK_FORGET_HOLD_SHARE of a group: held for an admin (holds/).
  | { ok: false; reason: "forget_held"; message: string };

/** Groups smaller than this are never held: removing 2 of 3 snapshots is ordinary retention. */
export const HOLD_MIN_GROUP = 4;

/** The first group whose planned removal is over the share, as a sentence; undefined: none. */
function oversizedRemoval(plan: RetentionPlanParams, share: number): string | undefined {
  for (const group of plan.groups) {
    const total = group.keep.length + group.keep_more + group.remove.length + group.suspect.length;
    if (total >= HOLD_MIN_GROUP && group.remove.length / total > share) {
      return `the retention plan would forget ${group.remove.length} of the ${total} snapshots of group ${group.tag} (more than ${Math.round(share * 100)}%)`;
    }
  }
  return undefined;
}

/**
 * A protected host's policy forget becomes a forget of the ids the server's plan removes
 * (retention/host-retention.ts): a host cannot steer retention by what its restic computes.
 */
async function planForKeeper(
  deps: JobDeps,
  hostId: string,
  plan: MaintenancePlan,
): Promise<
  | MaintenancePlan
  | Extract<MaintenanceDispatch, { reason: "nothing_to_forget" | "retention_refused" | "forget_held" }>
> {
  if (plan.kind !== "forget" || plan.planned !== undefined) {
    return plan;
  }
  const keeper = await keeperOf(deps.db, hostId);
  if (keeper === undefined) {
    return plan;
  }
  const [row] = await deps.db
    .select({ toolVersion: hosts.toolVersion })
    .from(hosts)
    .where(eq(hosts.id, keeper.id));
  const planned = await planHostRetention(deps.db, {
    hostId,
    groups: plan.forgetGroups ?? [],
    now: deps.clock.now(),
    defaultTimeZone: deps.config.timeZone,
    keeperToolVersion: row?.toolVersion ?? null,
  });
  if (!planned.ok) {
    return { ok: false, reason: "retention_refused", message: planned.error };
  }
  await recordSuspects(
    deps,
    hostId,
    planned.plan.groups.flatMap((group) => group.suspect),
    deps.clock.now(),
  );
  if (planned.snapshotIds.length === 0) {
    return {
      ok: false,
      reason: "nothing_to_forget",
      message: "the retention policies remove no snapshot of this host now",
    };
  }
  const oversized = oversizedRemoval(planned.plan, deps.config.forgetHoldShare);
  if (oversized !== undefined) {
    const { opened } = await openHold(
      deps,
      {
        hostId,
        kind: "large_forget",
        reason: oversized,
        details: {
          snapshot_ids: planned.snapshotIds,
          retention_plan: planned.plan,
          forget_groups: plan.forgetGroups ?? [],
        },
      },
      deps.clock.now(),
    );
    return {
      ok: false,
      reason: "forget_held",
      message: `${oversized}; ${opened ? "it waits" : "a held plan already waits"} for an admin to release the hold on the host page`,
    };
  }
  return { ...plan, planned: { snapshotIds: planned.snapshotIds, plan: planned.plan } };
}

/** `audit`: an operator's job, audited with its row (jobs/start-job.ts). */
export async function dispatchMaintenance(
  deps: JobDeps,
  hostId: string,
  given: MaintenancePlan,
  actor: { kind: ActorKind; userId?: string | null },
  audit?: JobAudit,
): Promise<MaintenanceDispatch> {
  // Held before it is planned: a plan made now would be refused anyway (jobs/dispatch-job.ts).
  if ((given.kind === "forget" || given.kind === "prune") && (await isDeletionHeld(deps.db, hostId))) {
    return { ok: false, reason: "deletion_held" };
  }
  const plan = await planForKeeper(deps, hostId, given);
  if ("ok" in plan) {
    return plan;
  }
  return startJob(deps, {
    kind: plan.kind,
    hostId,
    actor,
    params: paramsOf(plan),
    command: (jobId) => commandOf(plan, jobId),
    offline: "refuse",
    ...(audit === undefined ? {} : { audit }),
  });
}

/** An admin's approval of a held plan (maintenance/release-hold.ts): exactly that forget, now. */
export async function dispatchHeldForget(
  deps: JobDeps,
  hostId: string,
  held: { snapshotIds: string[]; plan: RetentionPlanParams; forgetGroups: unknown[]; userId: string | null },
): Promise<{ ok: true; jobId: string } | { ok: false; message: string }> {
  if (held.snapshotIds.length === 0) {
    return { ok: false, message: "the held plan names no snapshot" };
  }
  const sent = await dispatchMaintenance(
    deps,
    hostId,
    {
      kind: "forget",
      forgetGroups: held.forgetGroups as ForgetGroup[],
      planned: { snapshotIds: held.snapshotIds, plan: held.plan },
    },
    { kind: "user", userId: held.userId },
  );
  if (sent.ok) {
    return { ok: true, jobId: sent.job.id };
  }
  return { ok: false, message: "message" in sent ? sent.message : sent.reason.replaceAll("_", " ") };
}

async function protocolVersionOf(db: Database, hostId: string): Promise<number | null> {
  const [host] = await db.select({ version: hosts.protocolVersion }).from(hosts).where(eq(hosts.id, hostId));
  return host?.version ?? null;
}

/** An active job of this kind on the host, if one is queued or running. */
export async function activeJobOf(
  db: Database,
  hostId: string,
  kind: Job["kind"],
): Promise<string | undefined> {
  const [row] = await db
    .select({ id: jobs.id })
    .from(jobs)
    .where(and(eq(jobs.hostId, hostId), eq(jobs.kind, kind), inArray(jobs.status, ["queued", "running"])))
    .limit(1);
  return row?.id;
}

/** An operator's manual job; refusals are RequestErrors naming what to do. */
export async function startManualJob(
  deps: JobDeps,
  hostId: string,
  kind: ManualJobKind,
  audit: AuditContext,
): Promise<Job> {
  const plan: MaintenancePlan = { kind };
  if (kind === "forget") {
    plan.forgetGroups = await forgetGroupsOf(deps.db, hostId);
    if (plan.forgetGroups.length === 0) {
      throw conflict(
        "kind: no source group of this host has a retention policy, so forget would have nothing to keep by; set one first",
      );
    }
  }
  if (kind === "check") {
    const record = await getMaintenance(deps.db, hostId, deps.clock.now());
    if (record.checkReadDataSubset) {
      plan.readDataSubset = record.checkReadDataSubset;
    }
  }
  if (kind === "drill") {
    const record = await getMaintenance(deps.db, hostId, deps.clock.now());
    const drill = await drillPlanOf(deps.db, hostId, record.drillSampleFiles);
    if (!drill.ok) {
      throw conflict(`kind: ${drill.message}`);
    }
    plan.drill = drill.drill;
  }
  const active = await activeJobOf(deps.db, hostId, kind);
  if (active) {
    throw conflict(`kind: a ${kind} job of this host is already queued or running (${active})`, {
      job_id: active,
    });
  }
  const sent = await dispatchMaintenance(
    deps,
    hostId,
    plan,
    { kind: "user", userId: audit.actor.userId },
    { ...audit, action: `job.${kind}`, targetKind: "job", details: { host_id: hostId } },
  );
  if (!sent.ok) {
    if (
      sent.reason === "nothing_to_forget" ||
      sent.reason === "retention_refused" ||
      sent.reason === "forget_held"
    ) {
      throw conflict(`kind: ${sent.message}; nothing was started`);
    }
    if (sent.reason === "deletion_held") {
      throw conflict(
        `kind: forget and prune of this host are held until an admin releases its deletion hold (host page); nothing was started`,
      );
    }
    if (sent.reason === "admin_credentials_missing") {
      throw conflict(
        `kind: ${kind} needs the admin credentials of the repository; bind them on the host page first`,
      );
    }
    if (sent.reason === "shared_repository_old_agent") {
      throw conflict(`kind: ${sharedRepositoryOldAgentMessage(await protocolVersionOf(deps.db, hostId))}`);
    }
    if (sent.reason === "keeper_offline") {
      throw unavailable(
        `The keeper that maintains this host's repository is offline; nothing was started (${kind} of a protected host runs there).`,
      );
    }
    if (sent.reason === "keeper_needs_upgrade") {
      throw conflict(
        `kind: ${kind} runs on this host's keeper, whose agent is too old to keep it; update it`,
      );
    }
    if (sent.reason === "login_needs_agent_upgrade") {
      throw conflict(`kind: ${kind} needs the admin credentials, and ${LOGIN_NEEDS_UPGRADE}`);
    }
    throw unavailable("The host is offline; nothing was started.");
  }
  return sent.job;
}
