/**
 * @module fleet/fleet-bench
 * The server with a fleet connected: the built server in a child process, `hosts` enrolled
 * through the API and held online by simulated agents over real WebSockets. Speed is printed as
 * ratios against baselines measured in the same run: the dashboard, the host list page and API (a
 * page of 100 by name, the last page by last snapshot, a search with a state filter) against
 * `/healthz` (the cost of the server's HTTP path alone), and a reconnect storm of the whole fleet
 * (every agent says hello at once, as after a server restart) per agent against a storm of a
 * tenth of it (1.0 = the cost per agent does not grow with the fleet). Memory is the server
 * process's resident size before and with the fleet online.
 */
import { type BenchResult, median } from "../harness.js";
import { startServerChild } from "./server-child.js";
import { connectAgent, enrolHosts, pool, type SimAgent } from "./sim-agents.js";

export interface FleetBenchReport {
  results: BenchResult[];
  notes: string[];
}

/** Median ms of `rounds` sequential GETs, after two warm-up requests. */
async function latencyMs(url: string, token: string, rounds: number): Promise<number> {
  const get = async () => {
    const started = performance.now();
    const res = await fetch(url, { headers: { Authorization: `Bearer ${token}` } });
    await res.arrayBuffer();
    if (!res.ok) {
      throw new Error(`GET ${url}: ${res.status}`);
    }
    return performance.now() - started;
  };
  await get();
  await get();
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    times.push(await get());
  }
  return median(times);
}

/** All `agents` say hello at once; waits for every hello's answer; ms per agent of wall time. */
async function storm(agents: SimAgent[]): Promise<number> {
  const started = performance.now();
  await Promise.all(agents.map((agent) => agent.hello()));
  return (performance.now() - started) / agents.length;
}

/** RSS moves with garbage collection too; a small fleet's share can drown in it. */
function perAgent(growthBytes: number, hosts: number): string {
  return growthBytes > 0
    ? `${(growthBytes / hosts / 1024).toFixed(1)} KiB per connected agent`
    : "the fleet's share is below the noise of garbage collection (try more hosts)";
}

const MS = 1e6;
const MiB = 2 ** 20;

export async function runFleetBench(hosts: number): Promise<FleetBenchReport> {
  const server = await startServerChild();
  const agents: SimAgent[] = [];
  try {
    const rssStarted = await server.rssBytes();
    const enrolStarted = performance.now();
    const enrolled = await enrolHosts(server.url, server.apiToken, hosts);
    const enrolMs = performance.now() - enrolStarted;
    const healthz = await latencyMs(`${server.url}/healthz`, server.apiToken, 40);
    const rssIdle = await server.rssBytes();

    const connect = (list: typeof enrolled) => pool(list, 32, (host) => connectAgent(server.url, host));
    const tenth = Math.max(1, Math.round(hosts / 10));
    const small = await connect(enrolled.slice(0, tenth));
    agents.push(...small);
    const smallStorm = await storm(small);
    await Promise.all(small.map((agent) => agent.close()));
    agents.length = 0;
    // Let the server see those sockets gone before the whole fleet arrives.
    await new Promise((resolve) => setTimeout(resolve, 1_000));

    agents.push(...(await connect(enrolled)));
    const fullStorm = await storm(agents);
    for (const agent of agents) {
      agent.heartbeat();
    }
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const rssOnline = await server.rssBytes();
    const dashboard = await latencyMs(`${server.url}/`, server.apiToken, 20);
    const fleetPage = await latencyMs(`${server.url}/hosts`, server.apiToken, 20);
    const hostList = await latencyMs(`${server.url}/api/hosts`, server.apiToken, 20);
    // The sort that reads every host's newest snapshot, on the last page; and a search with a filter.
    const lastPage = Math.max(1, Math.ceil(hosts / 100));
    const bySnapshot = await latencyMs(
      `${server.url}/hosts?sort=last_snapshot&order=desc&page=${lastPage}`,
      server.apiToken,
      20,
    );
    const searched = await latencyMs(
      `${server.url}/api/hosts?q=bench-1&state=online&sort=status`,
      server.apiToken,
      20,
    );

    const result = (name: string, subjectMs: number, baselineName: string, baselineMs: number) => ({
      name,
      baselineName,
      subjectNsPerOp: subjectMs * MS,
      baselineNsPerOp: baselineMs * MS,
      ratio: subjectMs / baselineMs,
    });
    return {
      results: [
        result(`dashboard, ${hosts} hosts online`, dashboard, "GET /healthz", healthz),
        result(`host list page, ${hosts} hosts online`, fleetPage, "GET /healthz", healthz),
        result(`GET /api/hosts, ${hosts} hosts`, hostList, "GET /healthz", healthz),
        result(
          `host list page by last snapshot, page ${lastPage}, ${hosts} hosts`,
          bySnapshot,
          "GET /healthz",
          healthz,
        ),
        result(
          `GET /api/hosts searched, online, by status, ${hosts} hosts`,
          searched,
          "GET /healthz",
          healthz,
        ),
        result(
          `hello storm of ${hosts}, per agent`,
          fullStorm,
          `hello storm of ${tenth}, per agent`,
          smallStorm,
        ),
      ],
      notes: [
        `enrolled ${hosts} hosts through the API in ${(enrolMs / 1000).toFixed(1)} s`,
        `server rss (${server.engine}) ${(rssStarted / MiB).toFixed(1)} MiB just started, ${(rssIdle / MiB).toFixed(1)} MiB with the fleet enrolled and offline, ${(rssOnline / MiB).toFixed(1)} MiB with ${hosts} agents online: ${perAgent(rssOnline - rssIdle, hosts)}`,
      ],
    };
  } finally {
    await pool(agents, 64, (agent) => agent.close());
    await server.stop();
  }
}
