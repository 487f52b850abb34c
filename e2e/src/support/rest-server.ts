/**
 * @module support/rest-server
 * A real restic rest-server with --private-repos and an htpasswd file, on a free loopback port.
 * Users are added by running the very shell snippet the enrol page shows the operator.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./ports.js";
import { HTPASSWD_DIR, REST_SERVER } from "./tools.js";

export interface RestServer {
  url: string;
  dataDir: string;
  htpasswdFile: string;
  /**
   * Runs an operator snippet (`... | htpasswd -i -B /var/lib/rest-server/.htpasswd user`) against
   * our file; resolves once rest-server has read the file again.
   */
  runHtpasswdSnippet(snippet: string): Promise<void>;
  /** A graceful stop: rest-server finishes the uploads in flight before it exits. */
  stop(): Promise<void>;
  /** Gone at once, as by a crash or a pulled cable: the uploads in flight are cut. */
  kill(): Promise<void>;
}

/**
 * A second endpoint on another server's data (issue 33): `--append-only` for hosts, with logins
 * of its own (`htpasswdFile`, which the caller writes).
 */
export interface SecondEndpoint {
  dataDir: string;
  htpasswdFile: string;
  appendOnly: boolean;
}

let reloads = 0;

/**
 * rest-server reads its htpasswd file again on SIGHUP, in a goroutine of its own: a restic run
 * right after the signal could still meet the old file (a 401 seen in CI). A login written after
 * the snippet's is answered (404 for its missing repository, not 401) only once the whole file was
 * read again, so that is what this waits for.
 */
async function reloadHtpasswd(child: ChildProcess, url: string, htpasswdFile: string): Promise<void> {
  reloads += 1;
  const user = `reload-probe-${reloads}`;
  const password = `reload-probe-password-${reloads}`;
  execFileSync(join(HTPASSWD_DIR, "htpasswd"), ["-b", "-B", htpasswdFile, user, password]);
  child.kill("SIGHUP");
  const authorization = `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
  const deadline = Date.now() + 15_000;
  for (;;) {
    const res = await fetch(`${url}/${user}/config`, { headers: { Authorization: authorization } });
    await res.arrayBuffer();
    if (res.status !== 401) {
      return;
    }
    if (Date.now() > deadline) {
      throw new Error("rest-server did not read its htpasswd file again within 15 s of SIGHUP");
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * `again`: the data dir and port of a stopped server, to bring the same server back (an outage).
 * `second`: another endpoint on a running server's data.
 */
export async function startRestServer(
  again?: Pick<RestServer, "url" | "dataDir">,
  second?: SecondEndpoint,
): Promise<RestServer> {
  const dataDir = second?.dataDir ?? again?.dataDir ?? (await mkdtemp(join(tmpdir(), "fleetback-rest-")));
  const htpasswdFile = second?.htpasswdFile ?? join(dataDir, ".htpasswd");
  if (again === undefined && second === undefined) {
    execFileSync(join(HTPASSWD_DIR, "htpasswd"), ["-c", "-b", "-B", htpasswdFile, "probe", "probe-password"]);
  }
  const port = again === undefined ? await freePort() : Number(new URL(again.url).port);
  const child: ChildProcess = spawn(
    REST_SERVER,
    [
      "--path",
      dataDir,
      "--listen",
      `127.0.0.1:${port}`,
      "--private-repos",
      "--htpasswd-file",
      htpasswdFile,
      ...(second?.appendOnly === true ? ["--append-only"] : []),
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
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
    child.once("exit", (code) => reject(new Error(`rest-server exited with ${code}:\n${output}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    dataDir,
    htpasswdFile,
    async runHtpasswdSnippet(snippet) {
      const local = snippet.replace("/var/lib/rest-server/.htpasswd", htpasswdFile);
      execFileSync("bash", ["-c", local], {
        env: { ...process.env, PATH: `${HTPASSWD_DIR}:${process.env.PATH}` },
      });
      await reloadHtpasswd(child, `http://127.0.0.1:${port}`, htpasswdFile);
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        await exited;
      }
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGKILL");
        await exited;
      }
    },
  };
}
