/**
 * @module testing/rest-server
 * A real restic rest-server (from scripts/fetch-tools.sh) with private repositories and one
 * htpasswd user, on a port the server picks itself and prints. Optionally append-only (DELETE
 * answered 403 except for locks), and on the data of an earlier server, so a test can fill a
 * repository first and then meet it as append-only storage. Also a rest-server URL that nobody
 * answers on, for a repository that is down.
 */
import { execFile, execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { repoRoot } from "./tools.js";

const runFile = promisify(execFile);

export interface RestServer {
  /** `rest:http://127.0.0.1:PORT/<user>/`, without credentials. */
  url: string;
  /** Holds the htpasswd file and the data; pass it to serve the same repositories again. */
  dir: string;
  stop(): Promise<void>;
}

export interface RestServerOptions {
  appendOnly?: boolean;
  /** The `dir` of a stopped server: its user and repositories are served again. */
  dir?: string;
}

/** A rest-server URL on a loopback port that was free a moment ago and has nobody listening now. */
export async function deadRestUrl(): Promise<string> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const address = probe.address();
  await new Promise((resolve) => probe.close(resolve));
  if (address === null || typeof address === "string") {
    throw new Error("no port");
  }
  return `rest:http://127.0.0.1:${address.port}/dead`;
}

function tool(name: string, binary: string): string | undefined {
  const path = join(repoRoot(), ".cache", "tools", name, "usr", "bin", binary);
  return existsSync(path) ? path : undefined;
}

export function hasRestServer(): boolean {
  return (
    tool("rest-server", "restic-rest-server") !== undefined && tool("htpasswd", "htpasswd") !== undefined
  );
}

/** Test title suffix that says why a rest-server test was skipped. */
export function restServerNote(): string {
  return hasRestServer() ? "" : " (skipped: rest-server or htpasswd not found; run scripts/fetch-tools.sh)";
}

export async function startRestServer(
  user: string,
  password: string,
  options: RestServerOptions = {},
): Promise<RestServer> {
  const server = tool("rest-server", "restic-rest-server");
  const htpasswd = tool("htpasswd", "htpasswd");
  if (server === undefined || htpasswd === undefined) {
    throw new Error("rest-server or htpasswd missing: run scripts/fetch-tools.sh");
  }
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), "fleetback-rest-")));
  if (options.dir === undefined) {
    // -i reads the password from stdin, so it is not on a command line.
    execFileSync(htpasswd, ["-B", "-c", "-i", join(dir, ".htpasswd"), user], {
      input: password,
      stdio: ["pipe", "ignore", "ignore"],
    });
  }
  const child = spawn(
    server,
    [
      "--path",
      join(dir, "data"),
      "--listen",
      "127.0.0.1:0",
      "--private-repos",
      "--htpasswd-file",
      join(dir, ".htpasswd"),
      ...(options.appendOnly ? ["--append-only"] : []),
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  const port = await new Promise<string>((resolve, reject) => {
    let seen = "";
    // Go's log package writes to stderr; read both to be safe across versions.
    const watch = (chunk: Buffer) => {
      seen += chunk.toString();
      const match = /start server on [^\s:]+:(\d+)/.exec(seen);
      if (match?.[1]) {
        resolve(match[1]);
      }
    };
    child.stdout.on("data", watch);
    child.stderr.on("data", watch);
    child.on("exit", () => reject(new Error(`rest-server exited: ${seen}`)));
  });
  return {
    url: `rest:http://127.0.0.1:${port}/${user}/`,
    dir,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once("exit", () => resolve());
        child.kill("SIGKILL");
      }),
  };
}

/** restic itself on a rest-server repository, with the login in the URL as the agent merges it. */
export function resticOn(
  restic: string,
  rest: Pick<RestServer, "url">,
  login: { user: string; password: string; cacheDir: string },
): (...args: string[]) => Promise<string> {
  return async (...args) => {
    const { stdout } = await runFile(restic, args, {
      env: {
        PATH: process.env.PATH,
        RESTIC_REPOSITORY: rest.url.replace("http://", `http://${login.user}:${login.password}@`),
        RESTIC_PASSWORD: login.password,
        RESTIC_CACHE_DIR: login.cacheDir,
      },
    });
    return stdout;
  };
}

/**
 * Creates the repository and backs up three rounds of a growing file, tagged `t`: snapshots with
 * data of their own, so that a forget and a prune after them have something to delete.
 */
export async function fillRepository(restic: (...args: string[]) => Promise<string>): Promise<void> {
  const source = await mkdtemp(join(tmpdir(), "fleetback-src-"));
  await restic("init");
  for (const round of [1, 2, 3]) {
    await writeFile(join(source, "data.txt"), `round ${round}\n`.repeat(round * 100));
    await restic("backup", "--tag", "t", source);
  }
}

/** The full ids restic lists, sorted. */
export async function listedSnapshotIds(restic: (...args: string[]) => Promise<string>): Promise<string[]> {
  const listed = JSON.parse(await restic("snapshots", "--json")) as { id: string }[];
  return listed.map((snapshot) => snapshot.id).sort();
}
