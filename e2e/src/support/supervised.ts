/**
 * @module support/supervised
 * An agent run the way systemd runs it: bin/supervisor.mjs applies the restart rules of the unit
 * the installer generates (Restart=always, RestartPreventExitStatus= for the fatal exits), which
 * is what makes a self-update's exit-and-restart work and keeps a revoked agent down. Also a
 * helper that runs a one-shot command to its end.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_AGENT_PATHS, renderAgentUnit } from "@fleetback/installer";
import { e2eRoot } from "./paths.js";

/** Writes the unit install.sh would install for this agent command; the supervisor reads its rules. */
export function writeAgentUnit(command: string[]): string {
  const file = join(mkdtempSync(join(tmpdir(), "fleetback-unit-")), "fleetback-agent.service");
  const [execPath = process.execPath, maybeBundle = ""] = command;
  const bundle = /\.m?js$/.test(maybeBundle) ? maybeBundle : "";
  writeFileSync(
    file,
    renderAgentUnit({ ...DEFAULT_AGENT_PATHS, execPath, bundle, serverUrl: "http://127.0.0.1" }),
  );
  return file;
}

export interface Supervised {
  child: ChildProcess;
  /** Everything the supervisor and its children printed. */
  output(): string;
  /** How many times the supervisor started the command. */
  starts(): number;
  /** Resolves with the supervisor's exit code: it exits itself when the unit's rules say not to restart. */
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

export function startSupervised(
  command: string[],
  env: Record<string, string> = {},
  unitFile: string = writeAgentUnit(command),
): Supervised {
  const supervisor = join(e2eRoot, "bin/supervisor.mjs");
  const child = spawn(process.execPath, [supervisor, "--unit", unitFile, "--", ...command], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, FLEETBACK_AGENT_LOG_LEVEL: "debug", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return {
    child,
    output: () => output,
    starts: () => [...output.matchAll(/^supervisor: start \d+$/gm)].length,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
      }
      await exited;
    },
  };
}

/** Runs a command to its end; rejects with its output on a non-zero exit. */
export function runToEnd(command: string, args: string[], env: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    const collect = (chunk: Buffer) => {
      output += chunk.toString();
    };
    child.stdout.on("data", collect);
    child.stderr.on("data", collect);
    child.on("exit", (code) =>
      code === 0 ? resolve(output) : reject(new Error(`${command} exited with ${code}: ${output}`)),
    );
  });
}
