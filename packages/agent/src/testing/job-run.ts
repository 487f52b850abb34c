/**
 * @module testing/job-run
 * Runs one job handler against replayed restic output (recorded real runs from testdata/restic,
 * made by scripts/record-restic-fixtures.mjs) and collects everything it produced: outcome, log lines, progress,
 * snapshot reports, repo.stats, and every process spec for argv assertions. Hooks can run as
 * real /bin/sh processes while restic stays replayed.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { CommandRun, LogStreamName, RepoStats, Repository, SnapshotsReport } from "@fleetback/protocol";
import { createManualTimers, type ManualTimers } from "@fleetback/protocol/manual-timers";
import type { JobHandler, JobOutcome, ProgressState } from "../jobs/job-types.js";
import type { RepositoryJobDeps } from "../jobs/repository-job.js";
import { createCredentialStore } from "../restic/credential-store.js";
import { createToolVersionProbe } from "../restic/detect-version.js";
import { createReplayRunner, loadRecording, type Recording } from "../restic/replay-adapter.js";
import { createRestic } from "../restic/restic.js";
import type { ProcessResult, ProcessSpec, ResticRunner } from "../restic/runner.js";
import { createSpawnRunner } from "../restic/spawn-adapter.js";
import { createMemoryLogger, type MemoryLogger } from "./memory-logger.js";
import { resticFixturesDir } from "./tools.js";

export const TEST_PASSWORD = "testpass-secret-1";
export const ADMIN_PASSWORD = "adminpass-secret-2";
export const JOB_TEST_START = new Date("2026-11-21T23:00:00Z");

export type FixtureVersion = "0.14.0" | "0.18.0";

/** A recording from testdata/restic/<version>/<backend>; a missing one throws. */
export function fixture(
  version: FixtureVersion,
  name: string,
  backend: "local" | "rest" = "local",
): Recording {
  const dir = join(resticFixturesDir(), version, backend);
  if (!existsSync(join(dir, `${name}.stdout`))) {
    throw new Error(
      `no recording ${version}/${backend}/${name}; scripts/record-restic-fixtures.mjs makes it`,
    );
  }
  return loadRecording(dir, name);
}

/** `restic <command> --help` as recorded (testdata/restic/<version>/help/<command>.txt). */
export function fixtureHelp(version: FixtureVersion, command: string): string {
  return readFileSync(join(resticFixturesDir(), version, "help", `${command}.txt`), "utf8");
}

export interface RecordedSnapshot {
  tag: string;
  id: string;
  short_id: string;
}

/**
 * What differs from one recording run to the next, written beside the local recordings
 * (`_scenario.json`): the snapshots S1…S7 of the local repository in the order they were made
 * (forget-tag removes S1, diff compares S1 with S4), and the process that held the lock in the
 * err-locked-* recordings.
 */
export interface RecordedScenario {
  restic: FixtureVersion;
  /** The backed-up tree, the same path in every recording. */
  tree: string;
  /** The snapshot hostname of every backup. */
  host: string;
  snapshots: Record<"S1" | "S2" | "S3" | "S4" | "S5" | "S6" | "S7", RecordedSnapshot>;
  lock: { pid: number; hostname: string; username: string; uid: number; gid: number };
}

export function recordedScenario(version: FixtureVersion): RecordedScenario {
  const path = join(resticFixturesDir(), version, "local", "_scenario.json");
  return JSON.parse(readFileSync(path, "utf8")) as RecordedScenario;
}

/** The first line of restic's message when the recorded lock holder had the repository locked. */
export function recordedLockedError(version: FixtureVersion): string {
  const { pid, hostname, username, uid, gid } = recordedScenario(version).lock;
  return `unable to create lock in backend: repository is already locked by PID ${pid} on ${hostname} by ${username} (UID ${uid}, GID ${gid})`;
}

export const EMPTY_OK: Recording = { stdout: "", stderr: "", exitCode: 0 };

const GLOBAL_FLAGS_WITH_VALUE = new Set(["--cache-dir", "--limit-upload", "--limit-download"]);

/** The restic subcommand of an argv built by restic.ts (global flags come first). */
export function subcommandOf(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i];
    if (arg !== undefined && GLOBAL_FLAGS_WITH_VALUE.has(arg)) {
      i += 1;
    } else if (arg !== "--json") {
      return arg;
    }
  }
  return undefined;
}

/** Arguments after the subcommand. */
export function argsAfterSubcommand(args: readonly string[]): string[] {
  const subcommand = subcommandOf(args);
  return subcommand === undefined ? [] : args.slice(args.indexOf(subcommand) + 1);
}

/** Ends of a stand-in restic run (JobTestOptions.runs): stopped by the agent's SIGINT, or done. */
export const INTERRUPTED: ProcessResult = {
  kind: "exited",
  exitCode: null,
  signal: "SIGINT",
  cancelled: true,
  timedOut: false,
};
export const EXITED_0: ProcessResult = {
  kind: "exited",
  exitCode: 0,
  signal: null,
  cancelled: false,
  timedOut: false,
};

export interface JobTestOptions {
  /** The recording restic replays for each invocation other than `version`. */
  replay: (subcommand: string, spec: ProcessSpec) => Recording;
  /** Which recorded `restic version` the probe sees. */
  version?: FixtureVersion;
  /** A scripted `restic version` output instead (e.g. a 0.17 no fixture has). */
  versionRecording?: Recording;
  /** Extra variables of the agent's environment (HOME for restore targets). */
  env?: NodeJS.ProcessEnv;
  /** null: no credentials pushed for the slot. */
  repo?: Repository | null;
  admin?: Repository | null;
  /** The `mirror` slot (copy jobs and on_mirror upkeep); absent or null: none pushed. */
  mirror?: Repository | null;
  hostCaps?: { up: number | null; down: number | null };
  signal?: AbortSignal;
  /** Real /bin/sh for hooks; otherwise hooks "succeed" without running. */
  realHooks?: boolean;
  /** Fake time that passes after each replayed stdout line. */
  msPerLine?: number;
  /** The test's own timers (default: fresh ones starting at JOB_TEST_START). */
  timers?: ManualTimers;
  /** Runs a restic subcommand in place of its recording (one that hangs, say). */
  runs?: Partial<Record<string, (spec: ProcessSpec) => Promise<ProcessResult>>>;
  /** Sees each line the job logs as it is logged. */
  onLog?: (stream: LogStreamName, line: string) => void;
  /** Aborts the run's own signal with this reason between job.finished and the after-finish work. */
  abortAfterFinishWith?: Error;
}

export interface JobTestRun {
  outcome: JobOutcome;
  lines: { stream: LogStreamName; line: string }[];
  progress: { at: number; progress: ProgressState }[];
  reports: SnapshotsReport[];
  stats: RepoStats[];
  /** Every process but the version probe, in order. */
  calls: ProcessSpec[];
  timers: ManualTimers;
  log: MemoryLogger;
  /** How many snapshot reports and stats had been sent when the handler returned (job.finished). */
  finishedWith: { reports: number; stats: number };
}

export function linesOf(ran: JobTestRun, stream: LogStreamName): string[] {
  return ran.lines.filter((entry) => entry.stream === stream).map((entry) => entry.line);
}

export function resticCalls(ran: JobTestRun, subcommand?: string): ProcessSpec[] {
  return ran.calls.filter(
    (call) =>
      call.command === "restic" && (subcommand === undefined || subcommandOf(call.args) === subcommand),
  );
}

export async function runJobForTest<C extends CommandRun>(
  create: (deps: RepositoryJobDeps) => JobHandler<C>,
  command: C,
  options: JobTestOptions,
): Promise<JobTestRun> {
  const timers = options.timers ?? createManualTimers(JOB_TEST_START);
  const version = options.version ?? "0.18.0";
  const replay = createReplayRunner((spec) => {
    const subcommand = subcommandOf(spec.args) ?? "";
    if (subcommand === "version") {
      return options.versionRecording ?? fixture(version, "version");
    }
    return options.replay(subcommand, spec);
  });
  const spawn = createSpawnRunner({ killGraceMs: 500 });
  const calls: ProcessSpec[] = [];
  const runner: ResticRunner = {
    run(spec) {
      if (spec.command !== "restic") {
        calls.push(spec);
        return options.realHooks
          ? spawn.run(spec)
          : Promise.resolve({ kind: "exited", exitCode: 0, signal: null, cancelled: false, timedOut: false });
      }
      const subcommand = subcommandOf(spec.args);
      if (subcommand !== "version") {
        calls.push(spec);
      }
      const run = subcommand === undefined ? undefined : options.runs?.[subcommand];
      if (run) {
        return run(spec);
      }
      const msPerLine = options.msPerLine;
      return replay.run(
        msPerLine === undefined
          ? spec
          : {
              ...spec,
              onLine: (line) => {
                spec.onLine(line);
                if (line.stream === "stdout") {
                  timers.advance(msPerLine);
                }
              },
            },
      );
    },
  };
  const restic = createRestic({ runner, command: "restic", stateDir: "/state", parentEnv: {} });
  const credentials = createCredentialStore();
  const repo = options.repo === undefined ? { url: "/srv/repo", password: TEST_PASSWORD } : options.repo;
  if (repo !== null) {
    credentials.setRepository("repo", repo);
  }
  if (options.admin !== undefined && options.admin !== null) {
    credentials.setRepository("admin", options.admin);
  }
  if (options.mirror !== undefined && options.mirror !== null) {
    credentials.setRepository("mirror", options.mirror);
  }
  if (options.hostCaps) {
    credentials.setCaps({
      bandwidth_up_kbps: options.hostCaps.up,
      bandwidth_down_kbps: options.hostCaps.down,
    });
  }
  const reports: SnapshotsReport[] = [];
  const stats: RepoStats[] = [];
  const log = createMemoryLogger();
  const job = create({
    restic,
    toolVersion: createToolVersionProbe(restic),
    credentials,
    runner,
    parentEnv: { PATH: process.env.PATH, RESTIC_PASSWORD: "parent-secret", ...options.env },
    timers,
    clock: timers.clock,
    log,
    reportSnapshots: (report) => reports.push(report),
    reportStats: (report) => stats.push(report),
  });
  const lines: JobTestRun["lines"] = [];
  const progress: JobTestRun["progress"] = [];
  const controller = new AbortController();
  const { afterFinish, ...outcome } = await job({
    command,
    signal: options.signal ?? controller.signal,
    log: (stream, line) => {
      lines.push({ stream, line });
      options.onLog?.(stream, line);
    },
    progress: (state) => progress.push({ at: timers.clock.now().getTime(), progress: state }),
  });
  // As the queue does: the outcome is what job.finished says, then the after-finish work runs.
  const finishedWith = { reports: reports.length, stats: stats.length };
  const finishing = afterFinish?.();
  if (options.abortAfterFinishWith !== undefined) {
    controller.abort(options.abortAfterFinishWith);
  }
  await finishing;
  return { outcome, lines, progress, reports, stats, calls, timers, log, finishedWith };
}
