/**
 * @module jobs/dispatch-job
 * The one way a job's `command.run` reaches its host's agent. The caller mints the job id
 * (mintJobId) and builds the command from its data; this module checks once whether the host is
 * online, sends through the hub, and keeps the job row only when the command went out. An offline
 * host is an expected outcome, not an exception: the caller decides (a route answers 503, run-now
 * queues a pending run). The job stays `queued` until the agent's job.started.
 */
import { hosts, type Job, jobs } from "@fleetback/db";
import type { CommandRun, Repository } from "@fleetback/protocol";
import { eq } from "drizzle-orm";
import type { ServerDeps } from "../deps.js";
import { readHostCredentials } from "../hosts/credentials.js";
import { loginWithheldReason } from "../hosts/login-password-gate.js";
import { withSnapshotOwner } from "../snapshots/owner-command.js";
import { createJob, type NewJobInput } from "./create-job.js";

export type DispatchFailure =
  | "offline"
  | "admin_credentials_missing"
  | "mirror_credentials_missing"
  // The slot has a login of its own, which the host's agent is too old to use.
  | "login_needs_agent_upgrade"
  | "shared_repository_old_agent";
export type DispatchResult = { ok: true } | { ok: false; reason: DispatchFailure };
export type CreateAndDispatchResult = { ok: true; job: Job } | { ok: false; reason: DispatchFailure };

type DispatchDeps = Pick<ServerDeps, "db" | "keys" | "log" | "hub">;

/**
 * What goes out ahead of the command: the admin slot for prune and unlock, the mirror slot for a
 * copy (PROTOCOL.md).
 */
type Ready =
  | { ok: true; command: CommandRun; admin?: Repository; mirror?: Repository }
  | { ok: false; reason: DispatchFailure };

/** The command must describe its job (same id and kind): anything else is a bug. */
function assertDescribes(job: { id: string; kind: string }, command: CommandRun): void {
  if (command.job_id !== job.id || command.kind !== job.kind) {
    throw new Error(`command.run for ${command.kind} ${command.job_id} does not describe job ${job.id}`);
  }
}

/**
 * The admin or mirror slot to push ahead of the command. A slot with a login of its own goes only
 * to an agent that can use it: an older one would log in with the repository password.
 */
async function slotToPush(
  deps: DispatchDeps,
  hostId: string,
  slot: "admin" | "mirror",
): Promise<Repository | DispatchFailure> {
  const repository = (await readHostCredentials(deps, hostId))[slot];
  if (repository === undefined) {
    return slot === "admin" ? "admin_credentials_missing" : "mirror_credentials_missing";
  }
  if (repository.login_password !== undefined) {
    const [host] = await deps.db
      .select({ protocolVersion: hosts.protocolVersion })
      .from(hosts)
      .where(eq(hosts.id, hostId));
    if (loginWithheldReason(repository, host?.protocolVersion ?? null) !== undefined) {
      return "login_needs_agent_upgrade";
    }
  }
  return repository;
}

async function prepare(deps: DispatchDeps, hostId: string, given: CommandRun): Promise<Ready> {
  // The only online check of a dispatch: before anything is read or written for it.
  if (!deps.hub.isOnline(hostId)) {
    return { ok: false, reason: "offline" };
  }
  const owned = await withSnapshotOwner(deps.db, hostId, given);
  if (!owned.ok) {
    return owned;
  }
  const { command } = owned;
  // A copy writes to the mirror, and the mirror's upkeep runs there (`on_mirror`).
  if (command.kind === "copy" || command.on_mirror === true) {
    const mirror = await slotToPush(deps, hostId, "mirror");
    return typeof mirror === "string" ? { ok: false, reason: mirror } : { ok: true, command, mirror };
  }
  if (!command.requires_admin_creds) {
    return { ok: true, command };
  }
  const admin = await slotToPush(deps, hostId, "admin");
  return typeof admin === "string" ? { ok: false, reason: admin } : { ok: true, command, admin };
}

/** False when the agent went away since `prepare`: the hub then wrote nothing. */
function send(
  deps: DispatchDeps,
  hostId: string,
  command: CommandRun,
  ready: { admin?: Repository; mirror?: Repository },
): boolean {
  if (ready.admin && !deps.hub.send(hostId, "config.update", { slot: "admin", repository: ready.admin })) {
    return false;
  }
  if (ready.mirror && !deps.hub.send(hostId, "config.update", { slot: "mirror", repository: ready.mirror })) {
    return false;
  }
  return deps.hub.send(hostId, "command.run", command);
}

function logDispatched(deps: DispatchDeps, job: Pick<Job, "id" | "hostId" | "kind">): void {
  deps.log.info({ host_id: job.hostId, job_id: job.id, kind: job.kind }, "job dispatched");
}

/** Sends the command of a job whose row the caller created (in its own transaction). */
export async function dispatchJob(
  deps: DispatchDeps,
  job: Pick<Job, "id" | "hostId" | "kind">,
  command: CommandRun,
): Promise<DispatchResult> {
  assertDescribes(job, command);
  const ready = await prepare(deps, job.hostId, command);
  if (!ready.ok) {
    return ready;
  }
  if (!send(deps, job.hostId, ready.command, ready)) {
    return { ok: false, reason: "offline" };
  }
  logDispatched(deps, job);
  return { ok: true };
}

/**
 * Creates the job and sends its command. A command that could not be sent leaves no job row
 * behind, so a 503 to the operator means "nothing happened".
 */
export async function createAndDispatchJob(
  deps: DispatchDeps & Pick<ServerDeps, "clock" | "ids">,
  input: NewJobInput & { id: string },
  command: CommandRun,
): Promise<CreateAndDispatchResult> {
  assertDescribes(input, command);
  const ready = await prepare(deps, input.hostId, command);
  if (!ready.ok) {
    return ready;
  }
  const job = await createJob(deps, input);
  if (!send(deps, job.hostId, ready.command, ready)) {
    await deps.db.delete(jobs).where(eq(jobs.id, job.id));
    return { ok: false, reason: "offline" };
  }
  logDispatched(deps, job);
  return { ok: true, job };
}
