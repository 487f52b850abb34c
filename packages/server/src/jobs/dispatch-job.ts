/**
 * @module jobs/dispatch-job
 * How a job's `command.run` reaches its agent, for start-job.ts (the one way a job starts):
 * `prepareDispatch` checks once whether the host (or its keeper) is online and may run the command
 * and gathers the frames that go ahead of it; `sendPrepared` sends them through the hub. An
 * offline host is an expected outcome, not an exception. The job stays `queued` until the agent's
 * job.started.
 */
import { hosts, type Job } from "@fleetback/db";
import {
  type CommandRun,
  type ConfigUpdate,
  KEEPER_PROTOCOL_VERSION,
  type Repository,
} from "@fleetback/protocol";
import { eq } from "drizzle-orm";
import type { ServerDeps } from "../deps.js";
import { isDeletionHeld } from "../holds/deletion-holds.js";
import { readHostCredentials } from "../hosts/credentials.js";
import { loginWithheldReason } from "../hosts/login-password-gate.js";
import { type Keeper, keeperOf, runsOnKeeper } from "../keepers/keeper-of.js";
import { withSnapshotOwner } from "./owner-command.js";

export type DispatchFailure =
  | "offline"
  | "admin_credentials_missing"
  | "mirror_credentials_missing"
  // The slot has a login of its own, which the host's agent is too old to use.
  | "login_needs_agent_upgrade"
  | "shared_repository_old_agent"
  // A protected host's upkeep runs on its keeper (keepers/): offline, or too old to keep.
  | "keeper_offline"
  | "keeper_needs_upgrade"
  // An open deletion hold (holds/) stops every forget and prune of the host's repository.
  | "deletion_held";
type DispatchDeps = Pick<ServerDeps, "db" | "keys" | "log" | "hub">;

/**
 * Where the command goes and what goes out ahead of it: the admin slot for prune and unlock, the
 * mirror slot for a copy (PROTOCOL.md); for a protected host's upkeep, the keeper and the
 * credentials pushed for that one job (keepers/).
 */
export type Ready =
  | { ok: true; runner: string; command: CommandRun; frames: ConfigUpdate[] }
  | { ok: false; reason: DispatchFailure };

/** The command must describe its job (same id and kind): anything else is a bug. */
export function assertDescribes(job: { id: string; kind: string }, command: CommandRun): void {
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

/**
 * A protected host's upkeep, for its keeper: the delete-capable credential of the repository the
 * job works on (the mirror's for the mirror's upkeep) and a copy's mirror, each for this job only.
 */
async function keptReady(
  deps: DispatchDeps,
  hostId: string,
  keeper: Keeper,
  command: CommandRun,
): Promise<Ready> {
  if ((keeper.protocolVersion ?? 0) < KEEPER_PROTOCOL_VERSION) {
    return { ok: false, reason: "keeper_needs_upgrade" };
  }
  const credentials = await readHostCredentials(deps, hostId);
  const onMirror = command.on_mirror === true;
  const repository = onMirror ? credentials.mirror : credentials.admin;
  if (repository === undefined) {
    return { ok: false, reason: onMirror ? "mirror_credentials_missing" : "admin_credentials_missing" };
  }
  const jobId = command.job_id;
  const frames: ConfigUpdate[] = [{ slot: "admin", repository, job_id: jobId }];
  if (command.kind === "copy") {
    if (credentials.mirror === undefined) {
      return { ok: false, reason: "mirror_credentials_missing" };
    }
    frames.push({ slot: "mirror", repository: credentials.mirror, job_id: jobId });
  }
  const { on_mirror: _onMirror, ...rest } = command;
  const kept = { ...rest, kept: true, requires_admin_creds: true } as CommandRun;
  return { ok: true, runner: keeper.id, command: kept, frames };
}

/** `deps.db` is the starting job's transaction: what is read here commits with its row. */
export async function prepareDispatch(deps: DispatchDeps, hostId: string, given: CommandRun): Promise<Ready> {
  const keeper = runsOnKeeper(given) ? await keeperOf(deps.db, hostId) : undefined;
  // The only online check of a dispatch: before anything else is read or written for it.
  if (!deps.hub.isOnline(keeper?.id ?? hostId)) {
    return { ok: false, reason: keeper ? "keeper_offline" : "offline" };
  }
  if ((given.kind === "forget" || given.kind === "prune") && (await isDeletionHeld(deps.db, hostId))) {
    return { ok: false, reason: "deletion_held" };
  }
  const owned = await withSnapshotOwner(deps.db, hostId, given);
  if (!owned.ok) {
    return owned;
  }
  const { command } = owned;
  if (keeper !== undefined) {
    return keptReady(deps, hostId, keeper, command);
  }
  // A copy writes to the mirror, and the mirror's upkeep runs there (`on_mirror`).
  if (command.kind === "copy" || command.on_mirror === true) {
    const mirror = await slotToPush(deps, hostId, "mirror");
    return typeof mirror === "string"
      ? { ok: false, reason: mirror }
      : { ok: true, runner: hostId, command, frames: [{ slot: "mirror", repository: mirror }] };
  }
  if (!command.requires_admin_creds) {
    return { ok: true, runner: hostId, command, frames: [] };
  }
  const admin = await slotToPush(deps, hostId, "admin");
  return typeof admin === "string"
    ? { ok: false, reason: admin }
    : { ok: true, runner: hostId, command, frames: [{ slot: "admin", repository: admin }] };
}

/** False when the agent went away since `prepare`: the hub then wrote nothing. */
export function sendPrepared(deps: DispatchDeps, ready: Extract<Ready, { ok: true }>): boolean {
  for (const frame of ready.frames) {
    if (!deps.hub.send(ready.runner, "config.update", frame)) {
      return false;
    }
  }
  return deps.hub.send(ready.runner, "command.run", ready.command);
}

export function logDispatched(
  deps: DispatchDeps,
  job: Pick<Job, "id" | "hostId" | "kind">,
  runner: string,
): void {
  const kept = runner === job.hostId ? {} : { runner_host_id: runner };
  deps.log.info({ host_id: job.hostId, job_id: job.id, kind: job.kind, ...kept }, "job dispatched");
}
