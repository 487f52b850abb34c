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
  /** Runs an operator snippet (`... | htpasswd -i -B /var/lib/rest-server/.htpasswd user`) against our file. */
  runHtpasswdSnippet(snippet: string): void;
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
    runHtpasswdSnippet(snippet) {
      const local = snippet.replace("/var/lib/rest-server/.htpasswd", htpasswdFile);
      execFileSync("bash", ["-c", local], {
        env: { ...process.env, PATH: `${HTPASSWD_DIR}:${process.env.PATH}` },
      });
      // rest-server re-reads its htpasswd file when it changes (checked every 30 s); SIGHUP is immediate.
      child.kill("SIGHUP");
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
