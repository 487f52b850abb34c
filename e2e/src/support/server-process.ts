/**
 * @module support/server-process
 * Runs the real fleetback-server executable in a child process with its own data dir and port,
 * and collects everything it prints so tests can assert on it (and grep it for secrets).
 */

import { type ChildProcess, spawn } from "node:child_process";
import { cp, mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pgliteTemplateDir, serverMain } from "./paths.js";
import { freePort } from "./ports.js";
import { type ExitedProcess, runToExit } from "./run-to-exit.js";

export interface ServerProcess {
  child: ChildProcess;
  /** The base URL the server prints (FLEETBACK_BASE_URL). */
  url: string;
  /** Where it listens; differs from `url` when a test puts a proxy in front. */
  listenUrl: string;
  dataDir: string;
  output(): string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export type { ExitedProcess };

function baseEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    FLEETBACK_LOG_LEVEL: "info",
    // The tests' webhook receiver and SMTP sink listen on 127.0.0.1, which notifications refuse
    // unless allow-listed, as an operator with a local relay would (a test may override it).
    FLEETBACK_NOTIFY_ALLOW_NETWORKS: "127.0.0.0/8",
  };
  return { ...env, ...extra };
}

export async function makeDataDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), "fleetback-e2e-"));
}

/** Runs the server expecting it to exit by itself (a start-up failure). */
export function runServerToExit(env: Record<string, string>, timeoutMs = 60_000): Promise<ExitedProcess> {
  return runToExit([serverMain], baseEnv(env), timeoutMs);
}

/** Starts the server and resolves once it prints where it runs. */
export async function startServerProcess(
  env: Record<string, string> = {},
  timeoutMs = 60_000,
): Promise<ServerProcess> {
  let dataDir = env.FLEETBACK_DATA_DIR;
  if (dataDir === undefined) {
    dataDir = await makeDataDir();
    // A server of its own on the embedded database starts from the run's migrated template,
    // as a restart would; a first start's initdb is server-start.test.ts's and bench B7's.
    if (env.DATABASE_URL === undefined) {
      await cp(join(pgliteTemplateDir, "pglite"), join(dataDir, "pglite"), { recursive: true });
    }
  }
  // A known port, so the base URL (Origin checks, links, the installer) is the real one.
  const port = await freePort();
  const child = spawn(process.execPath, [serverMain], {
    env: baseEnv({
      FLEETBACK_LISTEN: `127.0.0.1:${port}`,
      FLEETBACK_BASE_URL: `http://127.0.0.1:${port}`,
      FLEETBACK_DATA_DIR: dataDir,
      ...env,
    }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`server not up within ${timeoutMs} ms:\n${output}`)),
      timeoutMs,
    );
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /Fleetback is running at (\S+?)\/?\s*$/m.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before it was up:\n${output}`));
    });
  });
  return {
    child,
    url,
    listenUrl: `http://127.0.0.1:${port}`,
    dataDir,
    output: () => output,
    async stop(signal: NodeJS.Signals = "SIGTERM") {
      if (child.exitCode !== null) {
        return child.exitCode;
      }
      child.kill(signal);
      return exited;
    },
  };
}
