/**
 * @module support/agent-process
 * Runs the real fleetback-agent (the single-file bundle the installer ships) with its own
 * config and state dirs and a chosen restic binary, collecting everything it prints.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { agentBundle } from "./paths.js";

export interface AgentDirs {
  configDir: string;
  stateDir: string;
}

export interface AgentRun {
  child: ChildProcess;
  output(): string;
  /** Resolves with the exit code once the process ends. */
  exited: Promise<number | null>;
  stop(): Promise<number | null>;
}

export async function makeAgentDirs(): Promise<AgentDirs> {
  const root = await mkdtemp(join(tmpdir(), "fleetback-agent-"));
  return { configDir: join(root, "config"), stateDir: join(root, "state") };
}

export function startAgent(
  args: string[],
  dirs: AgentDirs,
  env: Record<string, string> = {},
  bundle: string = agentBundle,
): AgentRun {
  const child = spawn(
    process.execPath,
    [bundle, ...args, "--config-dir", dirs.configDir, "--state-dir", dirs.stateDir],
    {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, FLEETBACK_AGENT_LOG_LEVEL: "debug", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return {
    child,
    output: () => output,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
      }
      return exited;
    },
  };
}

/** Runs a one-shot agent command (enroll, announce) to its end. */
export async function runAgent(
  args: string[],
  dirs: AgentDirs,
  env: Record<string, string> = {},
): Promise<{ code: number | null; output: string }> {
  const run = startAgent(args, dirs, env);
  const code = await run.exited;
  return { code, output: run.output() };
}
