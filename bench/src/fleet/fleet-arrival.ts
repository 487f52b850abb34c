/**
 * @module fleet/fleet-arrival
 * B2 at fleet scale (issue 40): every enrolled agent comes back as the real one does after losing
 * the server (connection/backoff.ts: full jitter from 1 s, doubling to 60 s) and retries whatever
 * fails (a refused or reset connection, a hello the server could not answer before its deadline).
 * Measured from the moment the server is ready until every agent's hello is answered, with the
 * retries counted; then the server's memory and a push's latency with the whole fleet online.
 */
import { RECONNECT_BACKOFF } from "@fleetback/protocol";
import { type BudgetRow, engineOf } from "../budgets.js";
import { bareWsRssBytes } from "./bare-ws.js";
import { latencyMs, percentile, pushLatencies } from "./fleet-probes.js";
import { startServerChild } from "./server-child.js";
import { connectAgent, type EnrolledHost, enrolHosts, pool, type SimAgent } from "./sim-agents.js";

const MiB = 2 ** 20;
/** Issue 40's B2 budget at 10,000 agents: online within 30 s, 400 MB (the bench's MiB) resident. */
const ARRIVAL_BUDGET_MS = 30_000;
const ARRIVAL_RSS_BUDGET_MIB = 400;
/** Past this an arrival is reported as failed instead of waited for. */
const GIVE_UP_MS = 600_000;

interface Arrived {
  agent: SimAgent;
  attempts: number;
  /** ms from the start until this agent's hello was answered. */
  atMs: number;
  /** ms from the start until this agent's first attempt. */
  firstAttemptMs: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One agent's reconnect loop, with the agent's own delays. */
async function arrive(url: string, host: EnrolledHost, started: number): Promise<Arrived> {
  let ceiling: number = RECONNECT_BACKOFF.initialMs;
  let attempts = 0;
  let firstAttemptMs = 0;
  for (;;) {
    await sleep(Math.floor(Math.random() * ceiling));
    ceiling = Math.min(RECONNECT_BACKOFF.maxMs, ceiling * 2);
    if (attempts === 0) {
      firstAttemptMs = performance.now() - started;
    }
    attempts++;
    let agent: SimAgent | undefined;
    try {
      agent = await connectAgent(url, host);
      await agent.hello();
      return { agent, attempts, atMs: performance.now() - started, firstAttemptMs };
    } catch (error) {
      await agent?.close();
      if (performance.now() - started > GIVE_UP_MS) {
        throw new Error(`agent ${host.hostId} not online after ${attempts} attempts: ${String(error)}`);
      }
    }
  }
}

export async function runFleetArrivalBench(
  hosts: number,
  options: { embedded?: boolean } = {},
): Promise<{ results: []; budgets: BudgetRow[]; notes: string[] }> {
  const server = await startServerChild(options);
  let arrived: Arrived[] = [];
  try {
    const enrolStarted = performance.now();
    const enrolled = await enrolHosts(server.url, server.apiToken, hosts);
    const enrolMs = performance.now() - enrolStarted;
    const healthz = await latencyMs(`${server.url}/healthz`, server.apiToken, 40);
    const started = performance.now();
    arrived = await Promise.all(enrolled.map((host) => arrive(server.url, host, started)));
    const allOnlineMs = Math.max(...arrived.map((a) => a.atMs));
    const lastFirstAttemptMs = Math.max(...arrived.map((a) => a.firstAttemptMs));
    const retries = arrived.reduce((sum, a) => sum + a.attempts - 1, 0);
    for (const { agent } of arrived) {
      agent.heartbeat();
    }
    await sleep(2_000);
    const rssOnline = await server.rssBytes();
    const bareRss = await bareWsRssBytes(hosts);
    const agents = arrived.map((a) => a.agent);
    const pushes = await pushLatencies(server.url, server.apiToken, agents);
    const engine = engineOf(server.engine);
    return {
      results: [],
      budgets: [
        {
          id: "B2",
          engine,
          case: `${hosts} agents arrive as the real one does (full-jitter backoff from 1 s): all online (${retries} retried connections)`,
          measured: allOnlineMs,
          unit: "ms",
          baselineName: "the backoff alone: the last agent's first attempt",
          baseline: lastFirstAttemptMs,
          budget: ARRIVAL_BUDGET_MS,
        },
        {
          id: "B2",
          engine,
          case: `server RSS with ${hosts} agents online (${server.engine})`,
          measured: rssOnline / MiB,
          unit: "MiB",
          baselineName: `a bare ws server holding ${hosts} sockets`,
          baseline: bareRss / MiB,
          budget: ARRIVAL_RSS_BUDGET_MIB,
        },
        {
          id: "B2",
          engine,
          case: `push to one agent (bandwidth PUT → config.update), p99 of ${pushes.length}, ${hosts} online`,
          measured: percentile(pushes, 99),
          unit: "ms",
          baselineName: "GET /healthz",
          baseline: healthz,
          budget: 50,
        },
      ],
      notes: [
        `arrival of ${hosts} (${server.engine}): enrolled through the API in ${(enrolMs / 1000).toFixed(1)} s; half online after ${(
          percentile(
            arrived.map((a) => a.atMs),
            50,
          ) / 1000
        ).toFixed(1)} s, all after ${(allOnlineMs / 1000).toFixed(1)} s; ${retries} retried connections`,
      ],
    };
  } finally {
    await pool(
      arrived.map((a) => a.agent),
      64,
      (agent) => agent.close(),
    );
    await server.stop();
  }
}
