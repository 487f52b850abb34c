/**
 * @module testing/cli-deps
 * CliDeps for in-process CLI tests: captured output, a fixed host identity, a replayed
 * `restic version`, and fast real timers unless a test passes its own.
 */
import { mkdtemp, readFile, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import type { CliDeps } from "../cli/cli-deps.js";
import { createReplayRunner } from "../restic/replay-adapter.js";
import { systemClock } from "../time/clock.js";
import { systemTimers } from "../time/timers.js";

export interface TestCliDeps extends CliDeps {
  readonly stdout: string[];
  readonly stderr: string[];
  readonly logLines: string[];
  readonly configDir: string;
  readonly stateDir: string;
}

export async function createTestCliDeps(overrides: Partial<CliDeps> = {}): Promise<TestCliDeps> {
  const root = await mkdtemp(join(tmpdir(), "fleetback-cli-"));
  const stdout: string[] = [];
  const stderr: string[] = [];
  const logLines: string[] = [];
  const configDir = join(root, "etc");
  const stateDir = join(root, "var");
  return {
    stdout,
    stderr,
    logLines,
    configDir,
    stateDir,
    env: {
      PATH: process.env.PATH,
      FLEETBACK_AGENT_CONFIG_DIR: configDir,
      FLEETBACK_AGENT_STATE_DIR: stateDir,
    },
    out: (line) => stdout.push(line),
    err: (line) => stderr.push(line),
    logWrite: (line) => logLines.push(line),
    identity: { hostname: "vm", os: "linux", arch: "x64" },
    agentVersion: "0.1.0",
    agentKind: "bundle",
    clock: systemClock,
    timers: systemTimers,
    claimPollIntervalMs: 5,
    runner: createReplayRunner({
      stdout: "restic 0.18.0 compiled with go1.24.4 on linux/amd64\n",
      stderr: "",
      exitCode: 0,
    }),
    onShutdownSignal: () => () => {},
    ...overrides,
  };
}

/** The agent.json the CLI wrote to the config dir (enroll, announce): for the owner alone (0600). */
export async function writtenAgentConfig(deps: TestCliDeps): Promise<Record<string, unknown>> {
  const path = join(deps.configDir, "agent.json");
  expect((await stat(path)).mode & 0o777).toBe(0o600);
  return JSON.parse(await readFile(path, "utf8"));
}
