/**
 * Issue 15 resilience: two replicas on one PostgreSQL behind a proxy, 200 simulated hosts split
 * over both. Every host fires its schedule for one slot and replica B is killed (SIGKILL) while
 * the firings are in flight. The hosts on B reconnect to A, and the agent's own fire ledger sends
 * again what may not have been read. Every firing produces exactly one job: none lost with B, none
 * doubled by the second sending.
 */
import { randomBytes } from "node:crypto";
import { type AgentConnection, createFireLedger } from "@fleetback/agent";
import { encode } from "@fleetback/protocol";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Api, bootstrapAdmin } from "./support/api.js";
import { eventually } from "./support/eventually.js";
import { freePort } from "./support/ports.js";
import { createPostgresDatabase, type TestPostgres } from "./support/postgres.js";
import { makeDataDir, type ServerProcess, startServerProcess } from "./support/server-process.js";
import { enrolSimHost, pool, type SimHost, simConnection } from "./support/sim-agents.js";
import { startTcpProxy, type TcpProxy } from "./support/tcp-proxy.js";
import { missingNote } from "./support/tools.js";

const HOSTS = 200;
const BOOTSTRAP = randomBytes(18).toString("hex");
const pgUrl = process.env.TEST_DATABASE_URL;
const missing = missingNote({ "PostgreSQL (TEST_DATABASE_URL)": pgUrl !== undefined && pgUrl !== "" });

interface FiringHost extends SimHost {
  scheduleId: string;
}

const hostPort = (server: ServerProcess) => new URL(server.listenUrl).host;

describe.skipIf(missing !== "")(`schedule firings while a replica is killed${missing}`, () => {
  let pg: TestPostgres;
  let a: ServerProcess;
  let b: ServerProcess;
  let proxy: TcpProxy;
  let api: Api;
  const connections: AgentConnection[] = [];

  beforeAll(async () => {
    pg = await createPostgresDatabase(pgUrl ?? "");
    const proxyPort = await freePort();
    const env = {
      DATABASE_URL: pg.url,
      FLEETBACK_BASE_URL: `http://127.0.0.1:${proxyPort}`,
      FLEETBACK_DATA_DIR: await makeDataDir(),
      FLEETBACK_BOOTSTRAP_TOKEN: BOOTSTRAP,
      FLEETBACK_LOG_LEVEL: "warn",
    };
    [a, b] = await Promise.all([startServerProcess(env), startServerProcess(env)]);
    proxy = await startTcpProxy(proxyPort, [hostPort(a), hostPort(b)]);
    api = await bootstrapAdmin(proxy.url, `/bootstrap?token=${BOOTSTRAP}`);
  }, 120_000);

  afterAll(async () => {
    for (const connection of connections) {
      connection.stop();
    }
    await Promise.all([a?.stop(), b?.stop()]);
    await proxy?.close();
    await pg?.drop();
  });

  async function enrol(i: number): Promise<FiringHost> {
    const { hostId, token } = await enrolSimHost(api, proxy.url, `fire-${String(i).padStart(3, "0")}`);
    const group = await api.send<{ source_group: { id: string } }>(
      "POST",
      `/api/hosts/${hostId}/source-groups`,
      {
        name: "etc",
        includes: ["/etc"],
        excludes: [],
        retention_policy: { last: 3 },
      },
    );
    expect(group.status, JSON.stringify(group.body)).toBe(201);
    const schedule = await api.send<{ schedule: { id: string } }>("POST", `/api/hosts/${hostId}/schedules`, {
      cron: "0 3 * * *",
      enabled: true,
      source_group_ids: [group.body.source_group.id],
    });
    expect(schedule.status, JSON.stringify(schedule.body)).toBe(201);
    return { hostId, token, scheduleId: schedule.body.schedule.id };
  }

  it(`${HOSTS} hosts fire one slot, B is killed mid-way: exactly one job per firing`, async () => {
    const hosts = await pool(
      Array.from({ length: HOSTS }, (_, i) => i),
      8,
      (i) => enrol(i),
    );
    const ready = new Map<string, () => void>();
    const sims = hosts.map((host) => {
      const ledger = createFireLedger();
      let connection: AgentConnection | undefined;
      const sim = {
        host,
        ledger,
        fire(payload: { schedule_id: string; scheduled_at: string }) {
          ledger.record(
            payload,
            connection?.sendFrame(encode("schedule.fire", payload)) ?? false,
            new Date(),
          );
        },
      };
      connection = simConnection(proxy.url, host, {
        // What the agent does in onReady: send again the firings that may not have been read.
        onReady: () => {
          for (const payload of ledger.replay(new Date())) {
            connection?.sendFrame(encode("schedule.fire", payload));
          }
        },
        onAccepted: () => ready.get(host.hostId)?.(),
      });
      connections.push(connection);
      return sim;
    });
    // Connect one at a time, so each takes the proxy order set for it: half the fleet on each replica.
    for (const [i, sim] of sims.entries()) {
      proxy.backends.splice(0, 2, ...(i % 2 === 0 ? [hostPort(a), hostPort(b)] : [hostPort(b), hostPort(a)]));
      const accepted = new Promise<void>((resolve) => ready.set(sim.host.hostId, resolve));
      void connections[i]?.run();
      await accepted;
    }
    const onB = proxy.routed.filter((backend) => backend === hostPort(b)).length;
    expect(onB).toBeGreaterThan(HOSTS / 4);
    proxy.backends.splice(0, 2, hostPort(b), hostPort(a));

    const slot = new Date(Date.UTC(2026, 10, 24, 3, 0, 0)).toISOString();
    const sql = postgres(pg.url, { max: 1, onnotice: () => undefined });
    const onBIds = sims.filter((_, i) => i % 2 === 1).map((sim) => sim.host.hostId);
    try {
      for (const sim of sims) {
        sim.fire({ schedule_id: sim.host.scheduleId, scheduled_at: slot });
      }
      // Killed once B has acted on a few of its firings and not yet on the rest: both cases happen.
      await eventually(
        async () => {
          const [row] = await sql<Array<{ n: string }>>`
            select count(*) as n from jobs where actor_kind = 'schedule' and host_id = any(${onBIds})`;
          return Number(row?.n) >= 5;
        },
        { what: "B to act on some firings", timeoutMs: 30_000, intervalMs: 5 },
      );
      await b.stop("SIGKILL");

      const counts = async () =>
        sql<Array<{ host_id: string; n: string }>>`
          select host_id, count(*) as n from jobs where actor_kind = 'schedule' group by host_id`;
      await eventually(async () => (await counts()).length === HOSTS, {
        what: `a scheduled job for each of the ${HOSTS} hosts`,
        timeoutMs: 90_000,
      });
      // Every host is back (on A) and has sent its firing again; give late ones time to land.
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      const perHost = await counts();
      expect(perHost).toHaveLength(HOSTS);
      expect(perHost.filter((row) => Number(row.n) !== 1)).toEqual([]);
      const sentAgain = a
        .output()
        .split("\n")
        .filter((line) => line.includes("already acted on")).length;
      console.info(
        `replica schedules: ${onB} of ${HOSTS} hosts were on B; ${sentAgain} repeated firings ignored on A`,
      );
    } finally {
      await sql.end();
    }
  });
});
