/**
 * @module jobs/dispatch-job
 * Sends a job's `command.run` to its host's agent. An offline host is an expected outcome, not an
 * exception: the caller decides (a route answers 503, run-now queues a pending run). The job stays
 * `queued` until the agent's job.started.
 */
import { type Job, jobs } from "@fleetback/db";
import type { CommandRun } from "@fleetback/protocol";
import { eq } from "drizzle-orm";
import type { ServerDeps } from "../deps.js";
import { readHostCredentials } from "../hosts/credentials.js";
import { createJob, type NewJobInput } from "./create-job.js";

export type DispatchFailure = "offline" | "admin_credentials_missing";
export type DispatchResult = { ok: true } | { ok: false; reason: DispatchFailure };

type DispatchDeps = Pick<ServerDeps, "db" | "keys" | "log" | "hub">;

/**
 * Sends `command`; for prune and unlock (`requires_admin_creds`) the admin slot goes first, as
 * the contract requires (packages/protocol/PROTOCOL.md). The command must describe `job` (same id
 * and kind): anything else is a bug.
 */
export async function dispatchJob(
  deps: DispatchDeps,
  job: Pick<Job, "id" | "hostId" | "kind">,
  command: CommandRun,
): Promise<DispatchResult> {
  if (command.job_id !== job.id || command.kind !== job.kind) {
    throw new Error(`command.run for ${command.kind} ${command.job_id} does not describe job ${job.id}`);
  }
  if (!deps.hub.isOnline(job.hostId)) {
    return { ok: false, reason: "offline" };
  }
  if (command.requires_admin_creds) {
    const { admin } = await readHostCredentials(deps, job.hostId);
    if (!admin) {
      return { ok: false, reason: "admin_credentials_missing" };
    }
    if (!deps.hub.send(job.hostId, "config.update", { slot: "admin", repository: admin })) {
      return { ok: false, reason: "offline" };
    }
  }
  if (!deps.hub.send(job.hostId, "command.run", command)) {
    return { ok: false, reason: "offline" };
  }
  deps.log.info({ host_id: job.hostId, job_id: job.id, kind: job.kind }, "job dispatched");
  return { ok: true };
}

export type CreateAndDispatchResult = { ok: true; job: Job } | { ok: false; reason: DispatchFailure };

/**
 * Creates the job and sends its command. A command that could not be sent leaves no job row
 * behind, so a 503 to the operator means "nothing happened".
 */
export async function createAndDispatchJob(
  deps: DispatchDeps & Pick<ServerDeps, "clock" | "ids">,
  input: NewJobInput,
  command: (jobId: string) => CommandRun,
): Promise<CreateAndDispatchResult> {
  if (!deps.hub.isOnline(input.hostId)) {
    return { ok: false, reason: "offline" };
  }
  const job = await createJob(deps, input);
  const sent = await dispatchJob(deps, job, command(job.id));
  if (!sent.ok) {
    await deps.db.delete(jobs).where(eq(jobs.id, job.id));
    return sent;
  }
  return { ok: true, job };
}
