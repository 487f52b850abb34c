/**
 * @module testing/restore-run
 * Runs the restore job through runJobForTest with a fresh HOME and state dir, its `restore --help`
 * flag probe answered from the recorded help, and S1's docs/ folder (the recordings' restore) as
 * the default order.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { CommandRunRestore } from "@fleetback/protocol";
import { createRestoreJob } from "../jobs/restore-job.js";
import { createToolFlagProbe } from "../restic/flag-probe.js";
import type { Recording } from "../restic/replay-adapter.js";
import type { ProcessSpec } from "../restic/runner.js";
import { unescapeInclude } from "../restore-helper/helper-request.js";
import {
  argsAfterSubcommand,
  type FixtureVersion,
  fixtureHelp,
  type JobTestOptions,
  recordedScenario,
  resticCalls,
  runJobForTest,
} from "./job-run.js";

const SCENARIO = recordedScenario("0.18.0");
/** The recordings restore S1's docs/ folder (3 files: 15 + 13 + 10 bytes, and sub/). */
export const SNAPSHOT = SCENARIO.snapshots.S1.id;
export const DOCS = `${SCENARIO.tree}/docs`;
export const JOB_ID = "01JD0000000000000000000001";

export function restoreCommand(overrides: Partial<CommandRunRestore["restore"]> = {}): CommandRunRestore {
  return {
    job_id: JOB_ID,
    kind: "restore",
    requires_admin_creds: false,
    restore: {
      snapshot_id: SNAPSHOT,
      paths: [DOCS],
      in_place: false,
      target_dir: `$HOME/fleetback-restore/${JOB_ID}/`,
      ...overrides,
    },
  };
}

export const restoreHelp = (version: FixtureVersion): Recording => ({
  stdout: fixtureHelp(version, "restore"),
  stderr: "",
  exitCode: 0,
});

/** Replays `helpText` for `restore --help` (the flag probe) and `recording` for everything else. */
export function withHelp(
  recording: Recording,
  helpText: Recording = restoreHelp("0.18.0"),
): JobTestOptions["replay"] {
  return (_subcommand, spec) => (spec.args.includes("--help") ? helpText : recording);
}

/**
 * Replays `recording` and, as real restic does for an include that matches, writes
 * `<target>/<include>`: restic before 0.16 says nothing about what it restored, so the job looks.
 */
export function writingIncludes(recording: Recording) {
  return (_subcommand: string, spec: ProcessSpec): Recording => {
    const after = argsAfterSubcommand(spec.args);
    const target = after[after.indexOf("--target") + 1] ?? "";
    after.forEach((arg, index) => {
      const include = after[index + 1];
      if (arg === "--include" && include !== undefined) {
        const place = join(target, unescapeInclude(include));
        mkdirSync(dirname(place), { recursive: true });
        writeFileSync(place, "restored\n");
      }
    });
    return recording;
  };
}

export async function runRestore(
  command: CommandRunRestore,
  replay: JobTestOptions["replay"],
  extra: Partial<JobTestOptions> = {},
  agentDirs: string[] = [],
) {
  const home = await mkdtemp(join(tmpdir(), "fleetback-home-"));
  const stateDir = await mkdtemp(join(tmpdir(), "fleetback-state-"));
  const ran = await runJobForTest(
    (deps) =>
      createRestoreJob({
        ...deps,
        agentDirs: [stateDir, ...agentDirs],
        toolFlags: createToolFlagProbe({ restic: deps.restic, stateDir, log: deps.log }),
      }),
    command,
    { replay, env: { HOME: home }, ...extra },
  );
  return { ...ran, home, stateDir };
}

export const restoreArgv = (ran: Awaited<ReturnType<typeof runRestore>>) => {
  const [call] = resticCalls(ran, "restore").filter((c) => !c.args.includes("--help"));
  return call === undefined ? undefined : { global: call.args, after: argsAfterSubcommand(call.args) };
};
