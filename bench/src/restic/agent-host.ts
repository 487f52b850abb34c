/**
 * @module restic/agent-host
 * One real host for B1 and B4: an enrolment token for a rest-server repository, the repository
 * user added with the snippet the server hands back, `fleetback-agent enroll`, then the agent
 * running until it is online with its repository initialised, as an operator brings one up.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pollFetch } from "../fleet/poll-fetch.js";
import { processCpuMs } from "../fleet/server-child.js";
import { AGENT_BUNDLE, RESTIC, type RestServer } from "./tools.js";

export interface BenchApi {
  get<T>(path: string): Promise<T>;
  send<T>(method: string, path: string, body?: unknown): Promise<T>;
}

export function benchApi(baseUrl: string, token: string): BenchApi {
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await pollFetch(`${baseUrl}${path}`, {
      method,
      headers: { Connection: "close", Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) {
      throw new Error(`${method} ${path}: ${res.status} ${text}`);
    }
    return (text ? JSON.parse(text) : undefined) as T;
  };
  return { get: (path) => call("GET", path), send: call };
}

export async function until<T>(
  what: string,
  timeoutMs: number,
  probe: () => Promise<T | undefined>,
  everyMs = 50,
) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) {
      return value;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

export interface AgentHost {
  hostId: string;
  /** The repository the server generated at enrolment, for bare restic against the same data. */
  repository: { url: string; password: string };
  /** The agent's state directory (its tree indexes live in `tree-index/`). */
  stateDir: string;
  /** The agent process's resident set now and at its peak, from /proc (Linux). */
  memory(): Promise<{ rssBytes: number; peakBytes: number }>;
  /** The agent process's own CPU time so far (not restic's), from /proc (Linux). */
  cpuMs(): Promise<number>;
  stop(): Promise<void>;
}

function runAgent(args: string[], dirs: { configDir: string; stateDir: string }): ChildProcess {
  return spawn(
    process.execPath,
    [AGENT_BUNDLE, ...args, "--config-dir", dirs.configDir, "--state-dir", dirs.stateDir],
    {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, FLEETBACK_RESTIC: RESTIC },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
}

function collect(child: ChildProcess): () => string {
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  return () => output;
}

export async function startAgentHost(
  baseUrl: string,
  api: BenchApi,
  rest: RestServer,
  user: string,
): Promise<AgentHost> {
  const repositoryUrl = `rest:${rest.url}/${user}/`;
  const minted = await api.send<{
    token: string;
    htpasswd_snippet: string;
    generated_password: string;
    generated_login_password: string;
  }>("POST", "/api/enrollment-tokens", { repository: { url: repositoryUrl, username: user } });
  rest.runHtpasswdSnippet(minted.htpasswd_snippet);
  const root = await mkdtemp(join(tmpdir(), "fleetback-bench-agent-"));
  const dirs = { configDir: join(root, "config"), stateDir: join(root, "state") };
  const enrol = runAgent(["enroll", "--server", baseUrl, "--token", minted.token], dirs);
  const enrolOutput = collect(enrol);
  const code = await new Promise<number | null>((resolve) => enrol.once("exit", resolve));
  if (code !== 0) {
    throw new Error(`fleetback-agent enroll exited with ${code}:\n${enrolOutput()}`);
  }
  const { host_id: hostId } = JSON.parse(await readFile(join(dirs.configDir, "agent.json"), "utf8")) as {
    host_id: string;
  };
  const agent = runAgent(["run"], dirs);
  const output = collect(agent);
  const exited = new Promise<void>((resolve) => agent.once("exit", () => resolve()));
  await until(
    "the agent online with its repository initialised",
    90_000,
    async () => {
      if (agent.exitCode !== null) {
        throw new Error(`the agent exited with ${agent.exitCode}:\n${output()}`);
      }
      const { host } = await api.get<{ host: { status: string; repository_init: { state: string } } }>(
        `/api/hosts/${hostId}`,
      );
      return host.status === "online" && host.repository_init.state === "initialised" ? true : undefined;
    },
    200,
  );
  return {
    hostId,
    stateDir: dirs.stateDir,
    repository: {
      url: repositoryUrl.replace(
        "rest:http://",
        // The user's rest-server login, apart from the repository password (issue 31).
        `rest:http://${user}:${encodeURIComponent(minted.generated_login_password)}@`,
      ),
      password: minted.generated_password,
    },
    async memory() {
      const status = await readFile(`/proc/${agent.pid}/status`, "utf8");
      const kib = (name: string) =>
        Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? Number.NaN);
      return { rssBytes: kib("VmRSS") * 1024, peakBytes: kib("VmHWM") * 1024 };
    },
    cpuMs: () => processCpuMs(agent.pid),
    async stop() {
      agent.kill("SIGTERM");
      await exited;
    },
  };
}
