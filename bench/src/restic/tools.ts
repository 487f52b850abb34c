/**
 * @module restic/tools
 * The real parts B1 and B4 run, where `scripts/prepare-tools.mjs` (run by `pnpm bench` first)
 * puts them: restic 0.18, rest-server and htpasswd from Debian, and the agent bundle the build
 * makes. A missing part stops the bench with what to run, never a silent skip.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "../fleet/server-child.js";

export const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
const tools = join(repoRoot, ".cache", "tools");
export const RESTIC = join(tools, "restic-0.18", "usr", "bin", "restic");
const REST_SERVER = join(tools, "rest-server", "usr", "bin", "restic-rest-server");
const HTPASSWD = join(tools, "htpasswd", "usr", "bin", "htpasswd");
export const AGENT_BUNDLE = join(repoRoot, "packages", "agent", "dist", "bundle", "fleetback-agent.mjs");

export function assertToolsPresent(): void {
  const missing = [RESTIC, REST_SERVER, HTPASSWD, AGENT_BUNDLE].filter((path) => !existsSync(path));
  if (missing.length > 0) {
    throw new Error(
      `B1/B4 need ${missing.join(", ")}: run \`pnpm bench\` (it builds and runs scripts/prepare-tools.mjs), or FLEETBACK_BENCH_RESTIC=0 to leave them out`,
    );
  }
}

export interface RestServer {
  url: string;
  /** Adds a user (the repository at /<user>/ with --private-repos) with this password. */
  addUser(user: string, password: string): void;
  /** Runs the snippet the server hands an operator at enrolment against this server's file. */
  runHtpasswdSnippet(snippet: string): void;
  stop(): Promise<void>;
}

export async function startRestServer(): Promise<RestServer> {
  const dataDir = await mkdtemp(join(tmpdir(), "fleetback-bench-rest-"));
  const htpasswdFile = join(dataDir, ".htpasswd");
  execFileSync(HTPASSWD, ["-c", "-b", "-B", htpasswdFile, "probe", "probe-password"]);
  const port = await freePort();
  const child: ChildProcess = spawn(
    REST_SERVER,
    ["--path", dataDir, "--listen", `127.0.0.1:${port}`, "--private-repos", "--htpasswd-file", htpasswdFile],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  await new Promise<void>((resolve, reject) => {
    let output = "";
    const timer = setTimeout(() => reject(new Error(`rest-server did not start:\n${output}`)), 15_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("start server on")) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    void exited.then(() => reject(new Error(`rest-server exited:\n${output}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    addUser(user, password) {
      execFileSync(HTPASSWD, ["-b", "-B", htpasswdFile, user, password]);
      child.kill("SIGHUP");
    },
    runHtpasswdSnippet(snippet) {
      const local = snippet.replace("/var/lib/rest-server/.htpasswd", htpasswdFile);
      execFileSync("bash", ["-c", local], {
        env: { ...process.env, PATH: `${join(HTPASSWD, "..")}:${process.env.PATH}` },
      });
      // rest-server re-reads its htpasswd file every 30 s; SIGHUP makes it immediate.
      child.kill("SIGHUP");
    },
    async stop() {
      child.kill("SIGTERM");
      await exited;
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
