/**
 * @module fleet/server-child
 * The built server as an operator runs it (`pnpm start`: its bundle, dist/bundle/), in a child
 * process so its memory is measured apart from the simulated fleet's: embedded PGlite in a
 * temporary data dir, or a new database on the PostgreSQL of FLEETBACK_BENCH_DATABASE_URL
 * (scratch-database.ts; the server migrates it, and it is dropped when the server stops).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createScratchDatabase } from "../scratch-database.js";

/** What `pnpm start` runs: the server bundled into one script (packages/server/scripts/bundle.mjs). */
export const serverMain = join(
  dirname(fileURLToPath(import.meta.url)),
  "../../../packages/server/dist/bundle/fleetback-server.mjs",
);

/**
 * The Node options `pnpm start` gives the bundle (the root package.json's start script, e.g.
 * `--v8-pool-size=1 --max-semi-space-size=4`: issue 19, B2 and B8), so that
 * the bench measures the server as an operator starts it rather than a copy of its command line.
 */
export const serverNodeArgs: readonly string[] = (() => {
  const rootPackage = join(dirname(fileURLToPath(import.meta.url)), "../../../package.json");
  const start = (JSON.parse(readFileSync(rootPackage, "utf8")) as { scripts: { start: string } }).scripts
    .start;
  const command =
    /(?:^|&&\s*)node((?:\s+--\S+)*)\s+packages\/server\/dist\/bundle\/fleetback-server\.mjs\s*$/.exec(start);
  if (!command) {
    throw new Error(
      `the root package.json's start script no longer ends by running the bundle with node: ${start}`,
    );
  }
  return (command[1] ?? "").split(/\s+/).filter((arg) => arg !== "");
})();

export interface ServerChild {
  url: string;
  /** "PGlite" or "PostgreSQL". */
  engine: string;
  /** The admin's API token. */
  apiToken: string;
  /** Resident set size of the server process, from /proc (Linux). */
  rssBytes(): Promise<number>;
  /** The server process's CPU time so far (user + system), from /proc (Linux). */
  cpuMs(): Promise<number>;
  stop(): Promise<void>;
}

/** utime + stime of a process, from /proc/<pid>/stat (Linux; ticks of 10 ms). */
export async function processCpuMs(pid: number | undefined): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8");
  // The command name (field 2) may hold spaces; the fields after its closing parenthesis do not.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

async function bootstrap(url: string, output: string): Promise<string> {
  const token = decodeURIComponent(/\/bootstrap\?token=(\S+)/.exec(output)?.[1] ?? "");
  const created = await fetch(`${url}/api/auth/bootstrap`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      bootstrap_token: token,
      username: "operator",
      password: "a long passphrase for measuring",
    }),
  });
  if (created.status !== 201) {
    throw new Error(`bootstrap: ${created.status} ${await created.text()}`);
  }
  const cookie = (created.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
  const minted = await fetch(`${url}/api/api-tokens`, {
    method: "POST",
    headers: { Cookie: cookie, "Content-Type": "application/json", Origin: url },
    body: JSON.stringify({ name: "bench" }),
  });
  if (minted.status !== 201) {
    throw new Error(`API token: ${minted.status} ${await minted.text()}`);
  }
  return ((await minted.json()) as { token: string }).token;
}

/**
 * `embedded`: PGlite whatever FLEETBACK_BENCH_DATABASE_URL says (the restic cases measure the
 * agent, and a second server on that database would find the first one's data, not an empty one).
 */
export async function startServerChild(options: { embedded?: boolean } = {}): Promise<ServerChild> {
  const dataDir = await mkdtemp(join(tmpdir(), "fleetback-bench-"));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const serverUrl = options.embedded ? undefined : process.env.FLEETBACK_BENCH_DATABASE_URL;
  const database = serverUrl === undefined ? undefined : await createScratchDatabase(serverUrl);
  const databaseUrl = database?.url;
  // e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the server of a bench run (issue 19);
  // Node refuses --cpu-prof in NODE_OPTIONS, so these go on the command line.
  const nodeArgs = (process.env.FLEETBACK_BENCH_SERVER_NODE_ARGS ?? "")
    .split(" ")
    .filter((arg) => arg !== "");
  const child: ChildProcess = spawn(process.execPath, [...serverNodeArgs, ...nodeArgs, serverMain], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      FLEETBACK_LISTEN: `127.0.0.1:${port}`,
      FLEETBACK_BASE_URL: url,
      FLEETBACK_DATA_DIR: dataDir,
      FLEETBACK_LOG_LEVEL: "warn",
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server not up within 60 s:\n${output}`)), 60_000);
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (/\/bootstrap\?token=\S+/.test(output) && /Fleetback is running at/.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`server exited before it was up:\n${output}`));
    });
  });
  const apiToken = await bootstrap(url, output);
  return {
    url,
    engine: databaseUrl ? "PostgreSQL" : "PGlite",
    apiToken,
    async rssBytes() {
      const status = await readFile(`/proc/${child.pid}/status`, "utf8");
      const kib = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? Number.NaN);
      return kib * 1024;
    },
    cpuMs: () => processCpuMs(child.pid),
    async stop() {
      child.kill("SIGTERM");
      await exited;
      await rm(dataDir, { recursive: true, force: true });
      await database?.drop();
    },
  };
}
