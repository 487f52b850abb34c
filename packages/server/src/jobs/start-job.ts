/**
 * @module jobs/start-job
 * The one way a job starts, whatever its kind. `startJob(deps, spec)` mints the id, builds the
 * command, and in ONE transaction checks that the host (or its keeper) can take it
 * (dispatch-job.ts), inserts the job row and, for an operator's job, its audit entry: an audit
 * entry never exists without its job, nor an audited job without its entry. After the commit the
 * command is sent.
 *
 * A host that cannot take the job is answered by the spec's offline policy: "refuse" writes
 * nothing and answers the typed reason; a queue (a backup's pending run, retries/) writes the
 * pending run and the audit entry naming it instead, in that same transaction. A command that
 * could not be sent after the commit (the agent went away in between) is undone as if the host
 * had been offline from the start: the row and its entry go together, in one transaction with
 * what the policy then writes, so a 503 still means "nothing was started" and a never-sent
 * auto-init stays retryable.
 */
import { type ActorKind, auditLog, type Database, type Job, type JobKind, jobs } from "@fleetback/db";
import type { CommandRun, ConfigUpdateCredentials } from "@fleetback/protocol";
import { eq } from "drizzle-orm";
import { type AuditInput, writeAudit } from "../audit/audit.js";
import type { ServerDeps } from "../deps.js";
import { createJob, mintJobId } from "./create-job.js";
import {
  assertDescribes,
  type DispatchFailure,
  logDispatched,
  prepareDispatch,
  type Ready,
  sendPrepared,
} from "./dispatch-job.js";

export type StartDeps = Pick<ServerDeps, "db" | "keys" | "log" | "hub" | "clock" | "ids">;

/**
 * The audit entry of an operator's job. Without `targetId` the entry's target is the job itself;
 * with one (a host, a group, a snapshot) its details name the job as `job_id`, or the queued
 * retry as `pending_run_id`.
 */
export interface JobAudit {
  actor: AuditInput["actor"];
  ip?: string | undefined;
  action: string;
  targetKind: string;
  targetId?: string;
  details?: Record<string, unknown>;
}

/**
 * Queues the job for when its host is back, in the start's transaction; answers the queued row's
 * id, or undefined when nothing could be queued (no retries left).
 */
export type QueueOffline = (tx: Database) => Promise<string | undefined>;

export interface JobSpec {
  kind: JobKind;
  hostId: string;
  actor: { kind: ActorKind; userId?: string | null };
  /** Minted by a caller whose params name the job (a restore's target); else minted here. */
  id?: string;
  /** The schedule that fired the job (actor `schedule`). */
  scheduledId?: string | null;
  sourceGroupId?: string | null;
  /** Non-secret parameters, shown on the job page; never credentials or hooks. */
  params?: Record<string, unknown>;
  /** The command that describes the job (same id and kind). */
  command: (jobId: string) => CommandRun;
  /**
   * Credentials of another host's repository pushed ahead of the command for this job alone
   * (`config.update.job_id`; a restore onto another host, restore/restore-source.ts). Never in
   * the job row.
   */
  jobCredentials?: (jobId: string) => ConfigUpdateCredentials[];
  audit?: JobAudit;
  offline: "refuse" | { queue: QueueOffline };
}

export type StartResult =
  | { ok: true; job: Job }
  /** Nothing was started; `pendingRunId` when the policy queued a retry instead. */
  | { ok: false; reason: DispatchFailure; pendingRunId?: string };

/** A job whose row committed and whose command is still to be sent. */
type Planned =
  | { ok: true; spec: JobSpec; job: Job; ready: Extract<Ready, { ok: true }>; auditId?: string }
  | { ok: false; result: StartResult };

function auditEntry(audit: JobAudit, started: { job_id: string } | { pending_run_id: string }): AuditInput {
  const jobTarget = audit.targetId === undefined && "job_id" in started;
  return {
    actor: audit.actor,
    ip: audit.ip,
    action: audit.action,
    targetKind: audit.targetKind,
    targetId: jobTarget ? started.job_id : audit.targetId,
    details: jobTarget ? (audit.details ?? {}) : { ...audit.details, ...started },
  };
}

/** What the offline policy writes for a job its host could not take; `tx` is the start's. */
async function refuse(deps: StartDeps, tx: Database, spec: JobSpec, reason: DispatchFailure) {
  const pendingRunId = spec.offline === "refuse" ? undefined : await spec.offline.queue(tx);
  if (pendingRunId === undefined) {
    return { ok: false, reason } as const;
  }
  if (spec.audit !== undefined) {
    await writeAudit(tx, deps, auditEntry(spec.audit, { pending_run_id: pendingRunId }));
  }
  return { ok: false, reason, pendingRunId } as const;
}

async function plan(deps: StartDeps, tx: Database, spec: JobSpec): Promise<Planned> {
  const id = spec.id ?? mintJobId(deps);
  const command = spec.command(id);
  assertDescribes({ id, kind: spec.kind }, command);
  const prepared = await prepareDispatch({ ...deps, db: tx }, spec.hostId, command);
  if (!prepared.ok) {
    return { ok: false, result: await refuse(deps, tx, spec, prepared.reason) };
  }
  const ready = { ...prepared, frames: [...prepared.frames, ...(spec.jobCredentials?.(id) ?? [])] };
  const job = await createJob(
    deps,
    {
      id,
      hostId: spec.hostId,
      kind: spec.kind,
      actorKind: spec.actor.kind,
      actorUserId: spec.actor.userId ?? null,
      scheduledId: spec.scheduledId ?? null,
      sourceGroupId: spec.sourceGroupId ?? null,
      params: spec.params ?? {},
      runnerHostId: ready.runner === spec.hostId ? null : ready.runner,
    },
    tx,
  );
  let auditId: string | undefined;
  if (spec.audit !== undefined) {
    auditId = deps.ids.ulid(deps.clock.now());
    await writeAudit(tx, deps, { ...auditEntry(spec.audit, { job_id: id }), id: auditId });
  }
  return { ok: true, spec, job, ready, ...(auditId === undefined ? {} : { auditId }) };
}

async function send(deps: StartDeps, planned: Extract<Planned, { ok: true }>): Promise<StartResult> {
  const { job, ready } = planned;
  let sent = false;
  try {
    sent = sendPrepared(deps, ready);
  } catch (err) {
    deps.log.warn({ err, host_id: job.hostId, job_id: job.id }, "job command could not be sent");
  }
  if (sent) {
    logDispatched(deps, job, ready.runner);
    return { ok: true, job };
  }
  return deps.db.transaction(async (tx) => {
    await tx.delete(jobs).where(eq(jobs.id, job.id));
    if (planned.auditId !== undefined) {
      await tx.delete(auditLog).where(eq(auditLog.id, planned.auditId));
    }
    return refuse(deps, tx, planned.spec, "offline");
  });
}

/**
 * Starts several jobs in one transaction, after `claim` (run first in it) said yes: a schedule
 * slot's claim commits with its jobs, auto-init's host lock covers its history check and its row.
 * `claim` answers why not, or undefined to go ahead.
 */
export async function startJobs<Declined extends string>(
  deps: StartDeps,
  specs: readonly JobSpec[],
  claim?: (tx: Database) => Promise<Declined | undefined>,
): Promise<{ declined: Declined } | { results: StartResult[] }> {
  const decided = await deps.db.transaction(async (tx) => {
    const declined = claim === undefined ? undefined : await claim(tx);
    if (declined !== undefined) {
      return { declined };
    }
    const planned: Planned[] = [];
    for (const spec of specs) {
      planned.push(await plan(deps, tx, spec));
    }
    return { planned };
  });
  if ("declined" in decided) {
    return { declined: decided.declined as Declined };
  }
  const results: StartResult[] = [];
  for (const planned of decided.planned) {
    results.push(planned.ok ? await send(deps, planned) : planned.result);
  }
  return { results };
}

export async function startJob(deps: StartDeps, spec: JobSpec): Promise<StartResult> {
  const started = await startJobs(deps, [spec]);
  const [result] = "results" in started ? started.results : [];
  if (result === undefined) {
    throw new Error("a start without a claim was declined");
  }
  return result;
}
