/**
 * @module fleet/fleet-probes
 * What the fleet cases measure from outside the server: a percentile, an operator's push to one
 * agent end to end, and the median latency of a GET.
 */
import { median } from "../harness.js";
import type { SimAgent } from "./sim-agents.js";

/** The p-th percentile (0–100) of `values`, nearest rank. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

/**
 * A push to one agent end to end: an operator's bandwidth PUT until that agent has the
 * config.update it causes, for up to 100 hosts one after another.
 */
export async function pushLatencies(url: string, token: string, agents: SimAgent[]): Promise<number[]> {
  const times: number[] = [];
  const step = Math.max(1, Math.floor(agents.length / 100));
  for (let i = 0; i < agents.length; i += step) {
    const agent = agents[i] as SimAgent;
    const started = performance.now();
    const pushed = agent.next("config.update", 30_000);
    const res = await fetch(`${url}/api/hosts/${agent.host.hostId}/bandwidth`, {
      method: "PUT",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ up_kbps: 1024 + i, down_kbps: null }),
    });
    await res.arrayBuffer();
    if (!res.ok) {
      throw new Error(`PUT bandwidth: ${res.status}`);
    }
    await pushed;
    times.push(performance.now() - started);
  }
  return times;
}

/** Median ms of `rounds` sequential GETs, after two warm-up requests. */
export async function latencyMs(url: string, token: string, rounds: number): Promise<number> {
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
