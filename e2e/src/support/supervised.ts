/**
 * @module support/supervised
 * An agent run the way systemd runs it: bin/supervisor.mjs restarts the command whenever it exits
 * (Restart=always), which is what makes a self-update's exit-and-restart work. Also a helper that
 * runs a one-shot command to its end.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { e2eRoot } from "./paths.js";

export interface Supervised {
  child: ChildProcess;
  /** Everything the supervisor and its children printed. */
  output(): string;
  /** How many times the supervisor started the command. */
  starts(): number;
  stop(): Promise<void>;
}

export function startSupervised(command: string[], env: Record<string, string> = {}): Supervised {
  const child = spawn(process.execPath, [join(e2eRoot, "bin/supervisor.mjs"), "--", ...command], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, FLEETBACK_AGENT_LOG_LEVEL: "debug", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    child,
    output: () => output,
    starts: () => [...output.matchAll(/^supervisor: start \d+$/gm)].length,
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
