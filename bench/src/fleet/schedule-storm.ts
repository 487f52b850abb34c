/**
 * @module fleet/schedule-storm
 * Budget B6 of issue 19: every host of the fleet fires a schedule slot in the same second (as at
 * 02:00 on a fleet with one nightly schedule), and the server must dispatch each host's backup
 * once. Each simulated agent gets a source group and a schedule through the API like an operator's,
 * learns the schedule's id from its schedule.set, and sends schedule.fire for one slot; half of
 * them send it twice (an agent's fire ledger repeats an unanswered fire), which must dispatch
 * nothing more. The baseline is the same fleet's hello storm (fleet-bench.ts): one message per host
 * that the server answers with a few queries and pushes.
 */
import type { SimAgent } from "./sim-agents.js";
import { pool } from "./sim-agents.js";

export interface ScheduleStorm {
  /** Wall ms from the first fire until every host holds its backup's command.run. */
  dispatchMs: number;
  hosts: number;
  duplicates: number;
  missing: number;
}

async function postJson<T>(url: string, token: string, body: unknown): Promise<T> {
  const res = await fetch(url, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== 201) {
    throw new Error(`POST ${url}: ${res.status} ${text}`);
  }
  return JSON.parse(text) as T;
}

const backups = (agent: SimAgent) =>
  agent.received.filter((m) => m.type === "command.run" && m.payload.kind === "backup").length;

/** Gives every agent a nightly schedule of one source group; resolves when each has it. */
export async function scheduleFleet(
  url: string,
  token: string,
  agents: SimAgent[],
): Promise<Map<SimAgent, string>> {
  const ids = new Map<SimAgent, string>();
  await pool(agents, 8, async (agent) => {
    const hostUrl = `${url}/api/hosts/${agent.host.hostId}`;
    const group = await postJson<{ source_group: { id: string } }>(`${hostUrl}/source-groups`, token, {
      name: "nightly",
      includes: ["/srv"],
    });
    const schedule = await postJson<{ schedule: { id: string } }>(`${hostUrl}/schedules`, token, {
      cron: "0 2 * * *",
      source_group_ids: [group.source_group.id],
    });
    const id = schedule.schedule.id;
    const deadline = Date.now() + 60_000;
    while (
      !agent.received.some((m) => m.type === "schedule.set" && m.payload.schedules.some((s) => s.id === id))
    ) {
      if (Date.now() > deadline) {
        throw new Error(`host ${agent.host.hostId} never got schedule ${id}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    ids.set(agent, id);
  });
  return ids;
}

/** Every agent fires the same slot at once; half fire it twice. */
export async function scheduleStorm(agents: SimAgent[], ids: Map<SimAgent, string>): Promise<ScheduleStorm> {
  const slot = "2026-11-27T02:00:00Z";
  const before = new Map(agents.map((agent) => [agent, backups(agent)]));
  const started = performance.now();
  const dispatched = agents.map((agent) => agent.next("command.run", 120_000));
  agents.forEach((agent, i) => {
    const fire = { schedule_id: ids.get(agent) ?? "", scheduled_at: slot };
    agent.send("schedule.fire", fire);
    if (i % 2 === 0) {
      agent.send("schedule.fire", fire);
    }
  });
  await Promise.allSettled(dispatched);
  const dispatchMs = performance.now() - started;
  // Room for a duplicate that was coming to arrive before counting.
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  let duplicates = 0;
  let missing = 0;
  for (const agent of agents) {
    const got = backups(agent) - (before.get(agent) ?? 0);
    duplicates += Math.max(0, got - 1);
    missing += got === 0 ? 1 : 0;
  }
  return { dispatchMs, hosts: agents.length, duplicates, missing };
}
