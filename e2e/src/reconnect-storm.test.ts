/**
 * Issue 15 resilience: a reconnect storm. 2,000 hosts are enrolled through the API and held online
 * by the agent's own connection code (createAgentConnection: its hello, heartbeats and real
 * backoff, 1 s doubling to 60 s with full jitter), no restic behind them. The server process is
 * restarted; every agent must be back (its hello accepted) within 180 s. That is a bound on
 * "back at all, with the real backoff" (capped at 60 s), not the speed budget: how fast a storm
 * settles is bench B2's to measure, and on a loaded CI machine the last agent came back after 93 s.
 */
import type { AgentConnection } from "@fleetback/agent";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Api, bootstrapAdmin } from "./support/api.js";
import { eventually } from "./support/eventually.js";
import { freePort } from "./support/ports.js";
import { createPostgresDatabase, type TestPostgres } from "./support/postgres.js";
import { makeDataDir, type ServerProcess, startServerProcess } from "./support/server-process.js";
import { enrolSimHost, pool, simConnection } from "./support/sim-agents.js";
import { missingNote } from "./support/tools.js";

const HOSTS = 2_000;
const BACK_WITHIN_MS = 180_000;
const pgUrl = process.env.TEST_DATABASE_URL;
const missing = missingNote({ "PostgreSQL (TEST_DATABASE_URL)": pgUrl !== undefined && pgUrl !== "" });

describe.skipIf(missing !== "")(`reconnect storm of ${HOSTS} agents after a restart${missing}`, () => {
  let pg: TestPostgres;
  let server: ServerProcess;
  let api: Api;
  let env: Record<string, string>;
  const connections: AgentConnection[] = [];
  /** Per host, when its latest hello was accepted (ms since epoch). */
  const acceptedAt = new Map<string, number>();

  beforeAll(async () => {
    pg = await createPostgresDatabase(pgUrl ?? "");
    const port = await freePort();
    env = {
      DATABASE_URL: pg.url,
      FLEETBACK_LISTEN: `127.0.0.1:${port}`,
      FLEETBACK_BASE_URL: `http://127.0.0.1:${port}`,
      FLEETBACK_DATA_DIR: await makeDataDir(),
      FLEETBACK_LOG_LEVEL: "warn",
    };
    server = await startServerProcess(env);
    api = await bootstrapAdmin(server.url, server.output());
  }, 120_000);

  afterAll(async () => {
    for (const connection of connections) {
      connection.stop();
    }
    await server?.stop();
    await pg?.drop();
  });

  it(`brings all ${HOSTS} back within ${BACK_WITHIN_MS / 1000} s of a restart, with the agent's real backoff`, async () => {
    const enrolStart = Date.now();
    const hosts = await pool(
      Array.from({ length: HOSTS }, (_, i) => i),
      16,
      (i) => enrolSimHost(api, server.url, `storm-${String(i).padStart(4, "0")}`),
    );
    const enrolMs = Date.now() - enrolStart;
    for (const host of hosts) {
      const connection = simConnection(server.url, host, {
        onAccepted: () => acceptedAt.set(host.hostId, Date.now()),
      });
      connections.push(connection);
      void connection.run();
    }
    await eventually(async () => acceptedAt.size === HOSTS, {
      what: `all ${HOSTS} agents online`,
      timeoutMs: 120_000,
    });
    // Steady state before the restart: every hello's follow-up work (the repository's auto-init
    // job among it) is done, as on a fleet that has been up for a while.
    const sql = postgres(pg.url, { max: 1, onnotice: () => undefined });
    try {
      await eventually(
        async () => {
          const [row] = await sql<Array<{ n: string }>>`select count(*) as n from jobs where kind = 'init'`;
          return Number(row?.n) === HOSTS;
        },
        { what: "every host's auto-init job", timeoutMs: 120_000 },
      );
    } finally {
      await sql.end();
    }

    const restartAt = Date.now();
    await server.stop("SIGTERM");
    const stoppedMs = Date.now() - restartAt;
    server = await startServerProcess(env);
    const upMs = Date.now() - restartAt;
    const back = () => [...acceptedAt.values()].filter((at) => at > restartAt).length;
    await eventually(async () => back() === HOSTS, {
      what: `all ${HOSTS} agents back`,
      timeoutMs: BACK_WITHIN_MS,
    });
    const times = [...acceptedAt.values()].map((at) => at - restartAt).sort((x, y) => x - y);
    const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? 0;
    console.info(
      `reconnect storm: ${HOSTS} enrolled in ${enrolMs} ms; server stopped in ${stoppedMs} ms, back in ${upMs} ms; agents back: p50 ${at(0.5)} ms, p90 ${at(0.9)} ms, last ${times.at(-1)} ms after the restart began`,
    );
    expect(times.at(-1) ?? Number.POSITIVE_INFINITY).toBeLessThan(BACK_WITHIN_MS);
    // The server agrees: every host is online, and connected. Presence is written in batches
    // after each hello is answered, so on a busy machine the count catches up a little after the
    // last agent is back: wait for it (bounded), then it must be every host.
    // The host list is paged; its total counts every host the filter matches.
    const online = async () => (await api.get<{ total: number }>("/api/hosts?state=online&limit=1")).total;
    await eventually(async () => (await online()) === HOSTS, {
      what: `the server to count all ${HOSTS} hosts online`,
      timeoutMs: 60_000,
    });
    expect(await online()).toBe(HOSTS);
    // Its steps wait up to 120 + 120 + 180 + 60 s on their own; the file's 180 s would cut a slow but
    // passing run short when another e2e file shares the machine.
  }, 540_000);
});
