/**
 * @module jobs/backup-job
 * `backup`: pre hook, `restic backup`, post hook, then the snapshot list. argv is
 * `[global flags: caps, --json] backup --tag <tag> [--exclude <p>]... -- <includes...>`, so an
 * include that starts with `-` is never read as a flag. Status lines become throttled
 * `job.progress` and are not logged; every other line is (stderr JSON errors as text). Exit 3
 * means restic wrote the snapshot but could not read some files: the job succeeds, with an error
 * text saying so, because the snapshot exists and is listed (SPEC 7); the unreadable files are in
 * the job log. A failed, timed-out or cancelled post hook is logged and changes nothing.
 */
import { createScrubber, redactUrl } from "@fleetback/crypto";
import type { CommandRunBackup, Repository, SnapshotsReport } from "@fleetback/protocol";
import type { CredentialStore } from "../agent/credential-store.js";
import type { Logger } from "../log/logger.js";
import type { BandwidthCaps, Restic, ResticResult } from "../restic/restic.js";
import type { ResticRunner } from "../restic/runner.js";
import type { Clock } from "../time/clock.js";
import type { Timers } from "../time/timers.js";
import { parseBackupLine, renderStderrLine } from "./backup-output.js";
import { createHookRunner, type HookRunner } from "./hooks.js";
import { NO_CREDENTIALS_ERROR } from "./init-job.js";
import type { JobHandler, JobOutcome, JobRun } from "./job-types.js";
import { createProgressThrottle } from "./progress-throttle.js";
import { fitToFrame, parseSnapshots } from "./snapshots-report.js";
import { createErrorCollector, toolOutcome } from "./tool-outcome.js";

export const UNREADABLE_FILES_ERROR = "some files could not be read";
/** SPEC Limits: "snapshot listing after backup: 60 s timeout". */
export const SNAPSHOTS_TIMEOUT_MS = 60_000;

export interface BackupJobDeps {
  restic: Restic;
  credentials: CredentialStore;
  /** Runs the hooks (the same process port as restic). */
  runner: ResticRunner;
  /** The agent's environment; hooks get its neutral part only. */
  parentEnv: NodeJS.ProcessEnv;
  timers: Timers;
  clock: Clock;
  log: Logger;
  reportSnapshots(report: SnapshotsReport): void;
  hookTimeoutMs?: number;
}

export function backupArgs(command: CommandRunBackup): string[] {
  return [
    "--tag",
    command.tag,
    ...command.excludes.flatMap((pattern) => ["--exclude", pattern]),
    "--",
    ...command.includes,
  ];
}

export function backupOutcome(result: ResticResult, command: string, error: string | undefined): JobOutcome {
  if (result.kind === "exited" && !result.cancelled && !result.timedOut && result.exitCode === 3) {
    return { status: "succeeded", exit_code: 3, error: UNREADABLE_FILES_ERROR };
  }
  return toolOutcome(result, command, error);
}

function scrubberFor(repository: Repository): (text: string) => string {
  const scrub = createScrubber([repository.password, repository.username]);
  return (text) => redactUrl(scrub(text));
}

async function listSnapshots(
  deps: BackupJobDeps,
  run: JobRun<CommandRunBackup>,
  repository: Repository,
  caps: BandwidthCaps,
): Promise<void> {
  const stdout: string[] = [];
  const errors = createErrorCollector();
  const result = await deps.restic.run({
    subcommand: "snapshots",
    repository,
    caps,
    json: true,
    signal: run.signal,
    timeoutMs: SNAPSHOTS_TIMEOUT_MS,
    onLine: (line) => {
      if (line.stream === "stdout") {
        stdout.push(line.text);
        return;
      }
      errors.observe("stderr", line.text);
      run.log("stderr", renderStderrLine(line.text));
    },
  });
  const fail = (reason: string) =>
    run.log("agent", `listing snapshots failed: ${reason}; the backup itself is not affected`);
  if (result.kind !== "exited" || result.exitCode !== 0 || result.cancelled || result.timedOut) {
    fail(toolOutcome(result, deps.restic.command, errors.best()).error ?? "restic snapshots failed");
    return;
  }
  const parsed = parseSnapshots(stdout.join("\n"));
  if (!parsed.ok) {
    fail(parsed.reason);
    return;
  }
  const { report, omitted } = fitToFrame(parsed.snapshots, deps.clock.now().toISOString());
  if (omitted > 0) {
    const message = `the snapshot list exceeds one frame: reported the ${report.snapshots.length} most recent, left out ${omitted} older`;
    deps.log.warn(message, { job_id: run.command.job_id, reported: report.snapshots.length, omitted });
    run.log("agent", `warning: ${message}`);
  }
  deps.reportSnapshots(report);
}

async function runPostHook(
  hooks: HookRunner,
  run: JobRun<CommandRunBackup>,
  script: string,
  outcome: JobOutcome,
): Promise<void> {
  const post = await hooks({
    name: "post-hook",
    script,
    command: run.command,
    status: outcome.status,
    // After a cancel the post hook still runs (it undoes what the pre hook did), bounded by its timeout.
    signal: run.signal.aborted ? undefined : run.signal,
    log: (line) => run.log("agent", line),
  });
  if (!post.ok) {
    run.log("agent", `${post.error}; the job status is not changed`);
  }
}

export function createBackupJob(deps: BackupJobDeps): JobHandler<CommandRunBackup> {
  return async (run) => {
    const { command } = run;
    const repository = deps.credentials.repository("repo");
    if (repository === undefined) {
      run.log("agent", "no repository credentials have been pushed to this agent");
      return { status: "failed", exit_code: null, error: NO_CREDENTIALS_ERROR };
    }
    const hooks = createHookRunner({
      runner: deps.runner,
      parentEnv: deps.parentEnv,
      scrub: scrubberFor(repository),
      timeoutMs: deps.hookTimeoutMs,
    });
    if (command.pre_hook !== undefined && command.pre_hook.trim() !== "") {
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

    const caps = deps.credentials.capsFor(command);
    const throttle = createProgressThrottle(run.progress, deps.timers, deps.clock);
    const errors = createErrorCollector();
    let summary: JobOutcome["summary"];
    const result = await deps.restic.run({
      subcommand: "backup",
      args: backupArgs(command),
      repository,
      caps,
      json: true,
      signal: run.signal,
      onLine: (line) => {
        if (line.stream === "stderr") {
          const text = renderStderrLine(line.text);
          errors.observe("stderr", line.text.includes('"exit_error"') ? line.text : text);
          run.log("stderr", text);
          return;
        }
        const parsed = parseBackupLine(line.text);
        if (parsed.kind === "status") {
          throttle.push(parsed.progress);
          return;
        }
        if (parsed.kind === "summary") {
          summary = parsed.summary;
        }
        run.log("stdout", line.text);
      },
    });
    throttle.flush();
    const base = backupOutcome(result, deps.restic.command, errors.best());
    const outcome: JobOutcome = summary === undefined ? base : { ...base, summary };

    if (command.post_hook !== undefined && command.post_hook.trim() !== "") {
      await runPostHook(hooks, run, command.post_hook, outcome);
    }
    if (outcome.status === "succeeded" && !run.signal.aborted) {
      await listSnapshots(deps, run, repository, caps);
    }
    return outcome;
  };
}
