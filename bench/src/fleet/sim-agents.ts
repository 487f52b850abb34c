/**
 * @module fleet/sim-agents
 * A fleet of agents reduced to their wire behaviour: each host is enrolled through the API like a
 * real agent, then holds a real WebSocket, says hello, and counts what the server sends. No restic
 * runs; the server cannot tell (it sees the same frames).
 */
import { decodeServerMessage, encode, PROTOCOL_VERSION, type ServerEnvelope } from "@fleetback/protocol";
import { WebSocket } from "ws";

export interface EnrolledHost {
  hostId: string;
  token: string;
}

export interface SimAgent {
  host: EnrolledHost;
  /** Resolves with the ms from hello to the server's first schedule.set. */
  hello(): Promise<number>;
  heartbeat(): void;
  /** Resolves with the ms until the server's next message of this type. */
  next(type: string, timeoutMs?: number): Promise<number>;
  /** Every message the server sent this agent, decoded, in order. */
  received: ServerEnvelope[];
  send(type: "schedule.fire", payload: { schedule_id: string; scheduled_at: string }): void;
  close(): Promise<void>;
}

async function postJson<T>(url: string, body: unknown, token?: string): Promise<T> {
  const res = await fetch(url, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== 201) {
    throw new Error(`POST ${url}: ${res.status} ${text}`);
  }
  return JSON.parse(text) as T;
}

/** Runs `work` over `items` with at most `limit` in flight. */
export async function pool<T, R>(items: T[], limit: number, work: (item: T, i: number) => Promise<R>) {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        results[i] = await work(items[i] as T, i);
      }
    }),
  );
  return results;
}

export async function enrolHosts(baseUrl: string, apiToken: string, count: number): Promise<EnrolledHost[]> {
  return pool(
    Array.from({ length: count }, (_, i) => i),
    8,
    async (i) => {
      const name = `bench-${String(i).padStart(4, "0")}`;
      const minted = await postJson<{ token: string }>(
        `${baseUrl}/api/enrollment-tokens`,
        { repository: { url: `rest:http://127.0.0.1:9/${name}/`, username: name } },
        apiToken,
      );
      const enrolled = await postJson<{ host_id: string; agent_token: string }>(
        `${baseUrl}/api/agents/enroll`,
        {
          token: minted.token,
          hostname: name,
          os: "linux",
          arch: "x64",
          agent_version: "0.1.0",
          tool_version: "0.18.0",
        },
      );
      return { hostId: enrolled.host_id, token: enrolled.agent_token };
    },
  );
}

export async function connectAgent(baseUrl: string, host: EnrolledHost): Promise<SimAgent> {
  const ws = new WebSocket(`${baseUrl.replace(/^http/, "ws")}/api/agents/ws`, {
    headers: { authorization: `Bearer ${host.token}` },
  });
  const listeners = new Set<(type: string) => void>();
  const received: ServerEnvelope[] = [];
  ws.on("message", (data: Buffer) => {
    const decoded = decodeServerMessage(data);
    if (decoded.ok) {
      received.push(decoded.message);
    }
    const type = decoded.ok ? decoded.message.type : "invalid";
    for (const listener of listeners) {
      listener(type);
    }
  });
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
    ws.once("unexpected-response", (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
  });
  const closed = new Promise<void>((resolve) => ws.once("close", () => resolve()));
  const next = (wanted: string, timeoutMs = 120_000) => {
    const since = performance.now();
    return new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => {
        listeners.delete(listener);
        reject(new Error(`no ${wanted} for ${host.hostId} in ${timeoutMs} ms`));
      }, timeoutMs);
      const listener = (type: string) => {
        if (type === wanted) {
          clearTimeout(timer);
          listeners.delete(listener);
          resolve(performance.now() - since);
        }
      };
      listeners.add(listener);
    });
  };
  return {
    host,
    next,
    received,
    send(type, payload) {
      ws.send(encode(type, payload));
    },
    hello() {
      const answered = next("schedule.set");
      ws.send(
        encode("hello", {
          agent_version: "0.1.0",
          tool_version: "0.18.0",
          protocol_version: PROTOCOL_VERSION,
          hostname: host.hostId,
          os: "linux",
          arch: "x64",
          running_job_ids: [],
        }),
      );
      return answered;
    },
    heartbeat() {
      ws.send(encode("heartbeat", { running_job_ids: [] }));
    },
    async close() {
      ws.close(1000, "bench done");
      await closed;
    },
  };
}
