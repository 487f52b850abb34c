/**
 * Issue 15 resilience, under a running backup: every PostgreSQL session of the server is
 * terminated (pg_terminate_backend), then PostgreSQL goes away and comes back. The server process
 * reaches the real database through a proxy that the test stops (every connection cut, new ones
 * refused, as a stopped database) and starts again. /readyz says not-ready while it
 * is away and ready again without a restart; the agent's reports sent in the window are retried,
 * not dropped: the backup ends `succeeded` with every log line stored once, in order.
 */
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentRun, startAgent } from "./support/agent-process.js";
import { type Api, bootstrapAdmin } from "./support/api.js";
import { enrolHost, waitHostReady } from "./support/enrol.js";
import { eventually } from "./support/eventually.js";
import { freePort } from "./support/ports.js";
import { createPostgresDatabase, type TestPostgres } from "./support/postgres.js";
import { type RestServer, startRestServer } from "./support/rest-server.js";
import { type ServerProcess, startServerProcess } from "./support/server-process.js";
import { startSlowBackup } from "./support/slow-backup.js";
import { waitJob } from "./support/stack.js";
import { startTcpProxy, type TcpProxy } from "./support/tcp-proxy.js";
import { FETCHED_TOOLS, missingNote, toolsPresent } from "./support/tools.js";

const pgUrl = process.env.TEST_DATABASE_URL;
const missing = missingNote({
  "PostgreSQL (TEST_DATABASE_URL)": pgUrl !== undefined && pgUrl !== "",
  [FETCHED_TOOLS]: toolsPresent(),
});

async function readyStatus(server: ServerProcess): Promise<number> {
  try {
    return (await fetch(`${server.listenUrl}/readyz`, { signal: AbortSignal.timeout(5_000) })).status;
  } catch {
    return 0;
  }
}

describe.skipIf(missing !== "")(`PostgreSQL away and back under a running backup${missing}`, () => {
  let pg: TestPostgres;
  let rest: RestServer;
  let dbProxy: TcpProxy;
  let server: ServerProcess;
  let api: Api;
  const agents: AgentRun[] = [];

  beforeAll(async () => {
    pg = await createPostgresDatabase(pgUrl ?? "");
    rest = await startRestServer();
    const direct = new URL(pg.url);
    dbProxy = await startTcpProxy(await freePort(), [`${direct.hostname}:${direct.port || "5432"}`]);
    const viaProxy = new URL(pg.url);
    viaProxy.hostname = "127.0.0.1";
    viaProxy.port = new URL(dbProxy.url).port;
    server = await startServerProcess({ DATABASE_URL: viaProxy.toString() });
    api = await bootstrapAdmin(server.url, server.output());
  }, 120_000);

  afterAll(async () => {
    await Promise.all(agents.map((agent) => agent.stop()));
    await server?.stop();
    await dbProxy?.close();
    await rest?.stop();
    await pg?.drop();
  });

  it("says not-ready while the database is away, recovers without a restart, and loses no report", async () => {
    const { hostId, dirs, env } = await enrolHost({ api, rest, restic: "0.18", user: "outage-host" });
    const agent = startAgent(["run"], dirs, env);
    agents.push(agent);
    await waitHostReady(api, hostId);
    // 4 MiB at 256 KiB/s: the backup is still uploading when the database goes and comes back.
    const { jobId } = await startSlowBackup(api, hostId, { mib: 4, upKbps: 256 });
    expect(await readyStatus(server)).toBe(200);

    // Every backend of the server killed under load (as a PostgreSQL restart does to sessions): the
    // server keeps running (postgres.js's write-after-close fault is survived) and reconnects.
    const admin = postgres(pgUrl ?? "", { max: 1, onnotice: () => undefined });
    try {
      const dbName = new URL(pg.url).pathname.slice(1);
      const killed = await admin<Array<{ pid: number }>>`
        select pid from pg_stat_activity where datname = ${dbName} and pid <> pg_backend_pid()`;
      await admin`select pg_terminate_backend(pid) from pg_stat_activity where datname = ${dbName} and pid <> pg_backend_pid()`;
      expect(killed.length).toBeGreaterThan(0);
    } finally {
      await admin.end();
    }
    await eventually(async () => (await readyStatus(server)) === 200, {
      what: "/readyz after the backends were terminated",
      timeoutMs: 60_000,
    });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(server.child.exitCode).toBeNull();

    const awayAt = Date.now();
    await dbProxy.pause();
    await eventually(async () => (await readyStatus(server)) === 503, {
      what: "/readyz to say not ready",
      timeoutMs: 60_000,
    });
    const notReadyAfterMs = Date.now() - awayAt;
    // The database stays away until a report of the running backup has met the outage and is being
    // retried: the window this test is about, whatever the machine's speed.
    await eventually(async () => server.output().includes("database unavailable; retrying") || undefined, {
      what: "a report to meet the outage and be retried",
      timeoutMs: 120_000,
    });
    const backAt = Date.now();
    await dbProxy.resume();
    await eventually(async () => (await readyStatus(server)) === 200, {
      what: "/readyz to say ready again",
      timeoutMs: 60_000,
    });
    console.info(
      `database outage: /readyz not-ready ${notReadyAfterMs} ms after the database went, ready ${Date.now() - backAt} ms after it came back`,
    );

    const job = await waitJob<{ status: string; error: string | null }>(api, jobId, { timeoutMs: 180_000 });
    expect(job.status, job.error ?? "").toBe("succeeded");
    const { lines } = await api.get<{ lines: Array<{ seq: number }> }>(`/api/jobs/${jobId}/logs`);
    const seqs = lines.map((line) => line.seq);
    expect(seqs.length).toBeGreaterThan(0);
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
    const output = server.output();
    // The window was exercised (a report met the outage and was retried) and nothing was given up.
    expect(output).toContain("database unavailable; retrying");
    expect(output).not.toContain("they are lost");
    expect(output).not.toContain("handling an agent message failed");
    const { host } = await api.get<{ host: { status: string } }>(`/api/hosts/${hostId}`);
    expect(host.status).toBe("online");
  });
});
