/**
 * @module fleet/sim-agents
 * A fleet of agents reduced to their wire behaviour: each host is enrolled through the API like a
 * real agent, then holds a real WebSocket, says hello, heartbeats every 30 s naming the jobs it
 * holds (every command.run until it sends that job's job.finished), and counts what the server
 * sends. No restic runs; the server cannot tell (it sees the same frames).
 */
import {
  type AgentMessageType,
  decodeServerMessage,
  encode,
  type PayloadOf,
  PROTOCOL_VERSION,
  type ServerEnvelope,
} from "@fleetback/protocol";
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
  send<K extends AgentMessageType>(type: K, payload: PayloadOf<K>): void;
  /** Sends a frame already encoded, so a measurement need not include the agent's encoding. */
  sendFrame(frame: string): void;
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
  const active = new Set<string>();
  ws.on("message", (data: Buffer) => {
    const decoded = decodeServerMessage(data);
    if (decoded.ok) {
      received.push(decoded.message);
      if (decoded.message.type === "command.run") {
        active.add(decoded.message.payload.job_id);
      }
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
  // A reset after the upgrade ends in "close" as well; unheard, it would end the bench.
  ws.on("error", () => {});
  const heartbeat = () => ws.send(encode("heartbeat", { running_job_ids: [...active] }));
  // As the agent does: the server closes a socket silent for 90 s.
  const beating = setInterval(heartbeat, 30_000);
  beating.unref();
  void closed.then(() => clearInterval(beating));
  let isClosed = false;
  void closed.then(() => {
    isClosed = true;
  });
  // A socket the server closes (a missed hello deadline, say) fails the wait at once, so an
  // agent arriving as a real one does (fleet-arrival.ts) retries instead of waiting out the timer.
  const next = (wanted: string, timeoutMs = 120_000) => {
    const since = performance.now();
    return new Promise<number>((resolve, reject) => {
      const fail = (why: string) => {
        clearTimeout(timer);
        listeners.delete(listener);
        reject(new Error(`no ${wanted} for ${host.hostId}: ${why}`));
      };
      const timer = setTimeout(() => fail(`none in ${timeoutMs} ms`), timeoutMs);
      const listener = (type: string) => {
        if (type === wanted) {
          clearTimeout(timer);
          listeners.delete(listener);
          resolve(performance.now() - since);
        }
      };
      listeners.add(listener);
      if (isClosed) {
        fail("the socket is closed");
      } else {
        void closed.then(() => fail("the server closed the socket"));
      }
    });
  };
  return {
    host,
    next,
    received,
    send(type, payload) {
      ws.send(encode(type, payload));
      if (type === "job.finished") {
        active.delete((payload as PayloadOf<"job.finished">).job_id);
      }
    },
    sendFrame(frame) {
      ws.send(frame);
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
    heartbeat,
    async close() {
      ws.close(1000, "bench done");
      await closed;
    },
  };
}
