/**
 * Issue 3 end to end, with real processes only: rest-server with --private-repos and an htpasswd
 * made from the enrol page's snippet, the built server, the agent bundle (enroll then run) with
 * real restic 0.18 and again 0.14. The host goes online, init succeeds and the repository exists;
 * reconnecting does not init again; a second host pointed at an existing repository inits as
 * success. A canary repository password planted at enrolment is then looked for everywhere.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentRun, makeAgentDirs, runAgent, startAgent } from "./support/agent-process.js";
import { type Api, bootstrapAdmin } from "./support/api.js";
import { eventually } from "./support/eventually.js";
import { createPostgresDatabase, type TestPostgres } from "./support/postgres.js";
import { type RestServer, startRestServer } from "./support/rest-server.js";
import { type ServerProcess, startServerProcess } from "./support/server-process.js";
import { FETCHED_TOOLS, missingNote, RESTIC, type ResticVersion, toolsPresent } from "./support/tools.js";

interface Minted {
  token: string;
  generated_password?: string;
  htpasswd_snippet?: string;
  install_command: string;
}
interface HostJson {
  id: string;
  status: string;
  tool_version: string;
  repository_init: { state: string; job_id?: string };
}
interface JobJson {
  id: string;
  kind: string;
  status: string;
  actor_kind: string;
  exit_code: number | null;
}

const CANARY = "Canary-Repo-Password-e2e-5521";

/** Scans every process's argv for the canary while the test runs: restic must never get it there. */
function watchArgv(canary: string): { stop(): string[] } {
  const hits: string[] = [];
  const timer = setInterval(() => {
    for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
      try {
        const argv = readFileSync(`/proc/${pid}/cmdline`, "latin1");
        if (argv.includes(canary)) {
          hits.push(argv.replaceAll("\0", " "));
        }
      } catch {
        // the process ended between listing and reading
      }
    }
  }, 25);
  return {
    stop() {
      clearInterval(timer);
      return hits;
    },
  };
}

function filesContaining(dir: string, needle: string): string[] {
  const found: string[] = [];
  const walk = (path: string) => {
    const info = statSync(path);
    if (info.isDirectory()) {
      for (const name of readdirSync(path)) {
        walk(join(path, name));
      }
    } else if (info.isFile() && readFileSync(path).includes(needle)) {
      found.push(path);
    }
  };
  walk(dir);
  return found;
}

const missing = missingNote({ [FETCHED_TOOLS]: toolsPresent() });
describe.skipIf(missing !== "")(`enrol with a token, go online, auto-init${missing}`, () => {
  let rest: RestServer;
  let server: ServerProcess;
  let api: Api;
  const agents: AgentRun[] = [];

  let pg: TestPostgres | undefined;

  beforeAll(async () => {
    rest = await startRestServer();
    // On PostgreSQL when CI has one, so the canary grep can read a pg_dump; else the embedded PGlite.
    pg = process.env.TEST_DATABASE_URL
      ? await createPostgresDatabase(process.env.TEST_DATABASE_URL)
      : undefined;
    server = await startServerProcess(pg ? { DATABASE_URL: pg.url } : {});
    api = await bootstrapAdmin(server.url, server.output());
  });
  afterAll(async () => {
    await Promise.all(agents.map((agent) => agent.stop()));
    await server?.stop();
    await rest?.stop();
    await pg?.drop();
  });

  async function enrolAndRun(restic: ResticVersion, repository: Record<string, string>) {
    const minted = await api.send<Minted>("POST", "/api/enrollment-tokens", {
      repository,
      initial_paths: ["/etc"],
      // No default nightly schedule: a run at the drawn hour would race the test's own jobs.
      initial_schedule: null,
    });
    expect(minted.status).toBe(201);
    if (minted.body.htpasswd_snippet) {
      await rest.runHtpasswdSnippet(minted.body.htpasswd_snippet);
    }
    const dirs = await makeAgentDirs();
    const env = { FLEETBACK_RESTIC: RESTIC[restic] };
    const enrolled = await runAgent(
      ["enroll", "--server", server.url, "--token", minted.body.token],
      dirs,
      env,
    );
    expect(enrolled.code, enrolled.output).toBe(0);
    const config = JSON.parse(readFileSync(join(dirs.configDir, "agent.json"), "utf8")) as {
      host_id: string;
    };
    expect(statSync(join(dirs.configDir, "agent.json")).mode & 0o777).toBe(0o600);
    const agent = startAgent(["run"], dirs, env);
    agents.push(agent);
    return { hostId: config.host_id, dirs, agent, minted: minted.body, env };
  }

  async function waitInitialised(hostId: string): Promise<HostJson> {
    return eventually(
      async () => {
        const { host } = await api.get<{ host: HostJson }>(`/api/hosts/${hostId}`);
        if (host.repository_init.state === "failed") {
          throw new Error(
            `init failed: ${JSON.stringify(await api.get(`/api/jobs/${host.repository_init.job_id}/logs`))}`,
          );
        }
        return host.status === "online" && host.repository_init.state === "initialised" ? host : undefined;
      },
      { what: `host ${hostId} online and initialised`, timeoutMs: 90_000 },
    );
  }

  async function initJobs(hostId: string): Promise<JobJson[]> {
    return (await api.get<{ jobs: JobJson[] }>(`/api/jobs?host_id=${hostId}&kind=init`)).jobs;
  }

  for (const restic of ["0.18", "0.14"] as const) {
    it(`restic ${restic}: online, init succeeds once, reconnect does not init again`, async () => {
      const argv = watchArgv(CANARY);
      const user = `host-${restic.replace(".", "")}`;
      const repository = { url: `rest:${rest.url}/${user}/`, username: user };
      const first = await enrolAndRun(restic, repository);
      expect(first.minted.generated_password).toMatch(/^[A-Za-z0-9_-]{32}$/);
      const host = await waitInitialised(first.hostId);
      expect(host.tool_version).toBe(`${restic}.0`);
      expect(existsSync(join(rest.dataDir, user, "config"))).toBe(true);
      const jobs = await initJobs(first.hostId);
      expect(jobs).toHaveLength(1);
      expect(jobs[0]).toMatchObject({ status: "succeeded", actor_kind: "system", exit_code: 0 });

      await first.agent.stop();
      await eventually(
        async () =>
          (await api.get<{ host: HostJson }>(`/api/hosts/${first.hostId}`)).host.status === "offline",
        {
          what: "offline after the agent stops",
        },
      );
      const again = startAgent(["run"], first.dirs, first.env);
      agents.push(again);
      await eventually(
        async () =>
          (await api.get<{ host: HostJson }>(`/api/hosts/${first.hostId}`)).host.status === "online",
        {
          what: "online again",
        },
      );
      // Give a wrongly re-dispatched init the time it would need to show up.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(await initJobs(first.hostId)).toHaveLength(1);
      expect(argv.stop()).toEqual([]);
    });
  }

  it("a second host pointed at an existing repository inits as success", async () => {
    const repository = { url: `rest:${rest.url}/shared/`, username: "shared", password: CANARY };
    // The operator adds the user to rest-server by hand here (no generated password, so no snippet).
    await rest.runHtpasswdSnippet(
      `printf '%s\\n' '${CANARY}' | htpasswd -i -B /var/lib/rest-server/.htpasswd 'shared'`,
    );
    const argv = watchArgv(CANARY);
    const one = await enrolAndRun("0.18", repository);
    await waitInitialised(one.hostId);
    const two = await enrolAndRun("0.14", repository);
    await waitInitialised(two.hostId);
    const [job] = await initJobs(two.hostId);
    expect(job).toMatchObject({ status: "succeeded", exit_code: 1 });
    const logs = await api.get<{ lines: Array<{ line: string }> }>(`/api/jobs/${job?.id}/logs`);
    expect(logs.lines.map((l) => l.line).join("\n")).toContain("config file already exists");

    // Canary: no process argv, no HTTP response, no log line of server or agents, no job log,
    // and no file of the server's data dir (the embedded database) holds the password in clear.
    expect(argv.stop()).toEqual([]);
    for (const page of ["/", `/hosts/${one.hostId}`, "/enroll", "/audit", "/settings/users"]) {
      await api.text(page);
    }
    api.seen.push(JSON.stringify(await api.get(`/api/hosts/${one.hostId}`)));
    api.seen.push(JSON.stringify(await api.get(`/api/audit`)));
    for (const text of api.seen) {
      expect(text).not.toContain(CANARY);
    }
    expect(server.output()).not.toContain(CANARY);
    for (const agent of agents) {
      expect(agent.output()).not.toContain(CANARY);
    }
    expect(filesContaining(server.dataDir, CANARY)).toEqual([]);
    if (pg) {
      const dump = pg.dump();
      expect(dump).toContain("host_credentials");
      expect(dump).not.toContain(CANARY);
    }
  });
});
