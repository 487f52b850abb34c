/**
 * @module jobs/repository-job
 * The frame every job that works on the repository shares: the credentials of the slot the
 * command needs (admin for prune and unlock, the kinds sent with `requires_admin_creds`), the effective
 * bandwidth caps, the pre hook, the tool run, the post hook, and then what the job reports about
 * the repository. A failing pre hook means the tool is not run; a failed, timed-out or cancelled
 * post hook is logged and changes nothing. After a cancel the post hook still runs (it undoes
 * what the pre hook did), bounded by its own timeout. A tool step that failed is read with the
 * repository guard's verdict (guard-outcome.ts): an unreachable repository or a lock left in it.
 */
import { createScrubber, redactUrl } from "@fleetback/crypto";
import {
  ADMIN_JOB_KINDS,
  type CommandRun,
  type CredentialSlot,
  type RepoStats,
  type Repository,
  type SnapshotsReport,
} from "@fleetback/protocol";
import type { Logger } from "../log/logger.js";
import type { CredentialStore } from "../restic/credential-store.js";
import type { ToolVersionProbe } from "../restic/detect-version.js";
import type { GuardRecord } from "../restic/guard-record.js";
import type { BandwidthCaps, Restic } from "../restic/restic.js";
import type { ResticRunner } from "../restic/runner.js";
import type { Clock } from "../time/clock.js";
import type { Timers } from "../time/timers.js";
import { settleGuardVerdict } from "./guard-outcome.js";
import { createHookRunner, type HookRunner } from "./hooks.js";
import type { JobOutcome, JobRun } from "./job-types.js";
import { NO_JOB_CREDENTIALS_ERROR } from "./kept-job.js";
import { type RepositoryProblem, usableRepository } from "./repository-refusal.js";

export const NO_ADMIN_CREDENTIALS_ERROR = "no admin credentials";

export interface RepositoryJobDeps {
  restic: Restic;
  /** Output fields and flags are gated on the tool version. */
  toolVersion: ToolVersionProbe;
  credentials: CredentialStore;
  /** Runs the hooks (the same process port as restic). */
  runner: ResticRunner;
  /** The agent's environment; hooks get its neutral part only. */
  parentEnv: NodeJS.ProcessEnv;
  timers: Timers;
  clock: Clock;
  log: Logger;
  reportSnapshots(report: SnapshotsReport): void;
  /** A partial `repo.stats`: only the fields present change on the server. */
  reportStats(stats: RepoStats): void;
  hookTimeoutMs?: number;
  /** Checked before the pre hook. Absent: no check. */
  repositoryProblem?: RepositoryProblem;
  /**
   * The verdicts of `restic`'s repository guard (restic/repository-guard.ts): an unreachable
   * repository or a lock `restic unlock` left. Absent: restic is not guarded.
   */
  guardRecord?: GuardRecord;
}

/** What a job's tool step works with once credentials and caps are settled. */
export interface RepositoryContext {
  repository: Repository;
  caps: BandwidthCaps;
}

export interface RepositoryJobSteps {
  /** The tool itself, between the hooks. */
  tool(context: RepositoryContext): Promise<JobOutcome>;
  /**
   * After the post hook, whenever the tool step ran (also when it failed or was cancelled; the
   * step decides what is worth reporting). Never changes the outcome.
   */
  report?(context: RepositoryContext, outcome: JobOutcome): Promise<void>;
  /** After the job's `job.finished` (JobOutcome.afterFinish), with the same repository. */
  afterFinish?(context: RepositoryContext, outcome: JobOutcome): Promise<void>;
}

/** Kinds that may run on the mirror (`on_mirror`, protocol 8): its upkeep, nothing else. */
export const MIRROR_JOB_KINDS: readonly CommandRun["kind"][] = ["forget", "prune", "check"];

/**
 * A mirror job runs with the mirror's one login (it has delete authority there); otherwise prune
 * and unlock need delete authority, and any command that says it needs admin gets admin.
 */
export function credentialSlotOf(command: CommandRun): CredentialSlot {
  if (command.on_mirror === true) {
    return "mirror";
  }
  return command.requires_admin_creds || ADMIN_JOB_KINDS.includes(command.kind) ? "admin" : "repo";
}

function scrubberFor(repository: Repository): (text: string) => string {
  const scrub = createScrubber([repository.password, repository.username, repository.login_password]);
  return (text) => redactUrl(scrub(text));
}

function hasScript(script: string | undefined): script is string {
  return script !== undefined && script.trim() !== "";
}

async function runPostHook(
  hooks: HookRunner,
  run: JobRun,
  script: string,
  outcome: JobOutcome,
): Promise<void> {
  const post = await hooks({
    name: "post-hook",
    script,
    command: run.command,
    status: outcome.status,
    signal: run.signal.aborted ? undefined : run.signal,
    log: (line) => run.log("agent", line),
  });
  if (!post.ok) {
    run.log("agent", `${post.error}; the job status is not changed`);
  }
}

export async function runRepositoryJob(
  deps: RepositoryJobDeps,
  run: JobRun,
  steps: RepositoryJobSteps,
): Promise<JobOutcome> {
  const { command } = run;
  if (command.on_mirror === true && !MIRROR_JOB_KINDS.includes(command.kind)) {
    const error = `${command.kind} does not run on the mirror; only ${MIRROR_JOB_KINDS.join(", ")} do`;
    run.log("agent", `${error}; restic was not run`);
    return { status: "failed", exit_code: null, error };
  }
  const credentials = deps.credentials.forCommand(command);
  const slot = credentialSlotOf(command);
  const pushed = credentials.repository(slot);
  if (pushed === undefined && command.kept === true) {
    run.log(
      "agent",
      `${NO_JOB_CREDENTIALS_ERROR}; a kept job never uses this agent's own; restic was not run`,
    );
    return { status: "failed", exit_code: null, error: NO_JOB_CREDENTIALS_ERROR };
  }
  if (pushed === undefined && slot === "mirror") {
    run.log(
      "agent",
      `no mirror credentials have been pushed to this agent; ${command.kind} on the mirror needs them`,
    );
    return { status: "failed", exit_code: null, error: "no mirror credentials" };
  }
  if (pushed === undefined && slot === "admin") {
    run.log("agent", `no admin credentials have been pushed to this agent; ${command.kind} needs them`);
    return { status: "failed", exit_code: null, error: NO_ADMIN_CREDENTIALS_ERROR };
  }
  const usable = await usableRepository(deps.repositoryProblem, run, pushed);
  if (!usable.ok) {
    return usable.outcome;
  }
  const { repository } = usable;
  const hooks = createHookRunner({
    runner: deps.runner,
    parentEnv: deps.parentEnv,
    scrub: scrubberFor(repository),
    timeoutMs: deps.hookTimeoutMs,
  });
  if (hasScript(command.pre_hook)) {
    const pre = await hooks({
      name: "pre-hook",
      script: command.pre_hook,
      command,
      signal: run.signal,
      log: (line) => run.log("agent", line),
    });
    if (!pre.ok) {
      run.log("agent", `${pre.error}; restic was not run`);
      return run.signal.aborted
        ? { status: "cancelled", exit_code: null }
        : { status: "failed", exit_code: null, error: pre.error };
    }
  }

  const context: RepositoryContext = { repository, caps: credentials.capsFor(command) };
  deps.guardRecord?.begin();
  const tooled = await steps.tool(context);
  const outcome = settleGuardVerdict(tooled, deps.guardRecord?.take(), {
    url: repository.url,
    subject:
      command.kind === "copy"
        ? "the repository or its mirror"
        : slot === "mirror"
          ? "the mirror"
          : "the repository",
  });
  if (outcome.error !== tooled.error && outcome.error !== undefined) {
    run.log("agent", outcome.error);
  }
  // restic prints nothing when it is interrupted: without this the log just stops.
  if (outcome.status === "cancelled") {
    run.log("agent", "cancelled: restic was interrupted; what it had not finished is not kept");
  }
  if (hasScript(command.post_hook)) {
    await runPostHook(hooks, run, command.post_hook, outcome);
  }
  // What a job reports (snapshot list, statistics) describes the host's own repository: never the
  // mirror's, nor the repository a keeper works on for another host.
  if (command.on_mirror !== true && command.kept !== true) {
    await steps.report?.(context, outcome);
    const after = steps.afterFinish;
    if (after !== undefined) {
      return { ...outcome, afterFinish: () => after(context, outcome) };
    }
  }
  return outcome;
}

/** True when the job ended well and nobody asked it to stop: the state to report after success. */
export function isCleanSuccess(run: JobRun, outcome: JobOutcome): boolean {
  return outcome.status === "succeeded" && !run.signal.aborted;
}
