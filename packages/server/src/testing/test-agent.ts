/**
 * @module testing/test-agent
 * A raw `ws` client speaking the agent protocol by hand: it records every frame the server sends,
 * lets a test wait for the next one or for the close, and sends well-formed or deliberately broken
 * frames. No agent code is involved, so server tests see exactly the wire.
 */
import {
  type AgentMessageType,
  decodeServerMessage,
  encode,
  type Hello,
  type PayloadOf,
  PROTOCOL_VERSION,
  type ServerEnvelope,
  systemTimers,
} from "@fleetback/protocol";
import { WebSocket } from "ws";
import type { ServerDeps } from "../deps.js";
import { eventually } from "./eventually.js";
import { readJob } from "./seed.js";

export interface TestAgent {
  ws: WebSocket;
  /** Every decoded frame from the server, in arrival order. */
  frames: ServerEnvelope[];
  send<K extends AgentMessageType>(type: K, payload: PayloadOf<K>, id?: string): void;
  sendRaw(data: string | Buffer): void;
  hello(overrides?: Partial<Hello>): void;
  /** Resolves with the frame at `index` (0-based) once it has arrived. */
  frame(index: number, timeoutMs?: number): Promise<ServerEnvelope>;
  /** Resolves with the first frame, from `from` on, that matches. */
  waitFor(
    match: (frame: ServerEnvelope) => boolean,
    timeoutMs?: number,
    from?: number,
  ): Promise<ServerEnvelope>;
  closed: Promise<{ code: number; reason: string }>;
  close(): Promise<void>;
}

export function helloPayload(overrides: Partial<Hello> = {}): Hello {
  return {
    agent_version: "0.1.0",
    tool_version: "0.18.0",
    protocol_version: PROTOCOL_VERSION,
    hostname: "web-1",
    os: "linux",
    arch: "amd64",
    running_job_ids: [],
    ...overrides,
  };
}

export async function connectAgent(wsUrl: string, token: string): Promise<TestAgent> {
  const ws = new WebSocket(wsUrl, { headers: { authorization: `Bearer ${token}` } });
  const frames: ServerEnvelope[] = [];
  const waiters = new Set<() => void>();
  ws.on("message", (data: Buffer) => {
    const decoded = decodeServerMessage(data);
    if (!decoded.ok) {
      throw new Error(`server sent an invalid frame: ${decoded.error.message}`);
    }
    frames.push(decoded.message);
    for (const wake of [...waiters]) {
      wake();
    }
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    ws.on("close", (code, reason) => {
      resolve({ code, reason: reason.toString() });
      for (const wake of [...waiters]) {
        wake();
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
    ws.once("unexpected-response", (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
  });

  function waitFor(match: (frame: ServerEnvelope) => boolean, timeoutMs = 5_000, from = 0) {
    return new Promise<ServerEnvelope>((resolve, reject) => {
      const check = () => {
        const found = frames.slice(from).find(match);
        if (found) {
          done();
          resolve(found);
        } else if (ws.readyState === WebSocket.CLOSED) {
          done();
          reject(new Error(`socket closed; frames so far: ${frames.map((f) => f.type).join(", ")}`));
        }
      };
      const cancelTimer = systemTimers.after(timeoutMs, () => {
        done();
        reject(
          new Error(`no matching frame in ${timeoutMs} ms; got: ${frames.map((f) => f.type).join(", ")}`),
        );
      });
      const done = () => {
        cancelTimer();
        waiters.delete(check);
      };
      waiters.add(check);
      check();
    });
  }

  return {
    ws,
    frames,
    send(type, payload, id) {
      ws.send(encode(type, payload, id));
    },
    sendRaw(data) {
      ws.send(data);
    },
    hello(overrides) {
      ws.send(encode("hello", helloPayload(overrides)));
    },
    frame(index, timeoutMs = 5_000) {
      return waitFor((frame) => frames.indexOf(frame) === index, timeoutMs);
    },
    waitFor,
    closed,
    async close() {
      if (ws.readyState !== WebSocket.CLOSED) {
        ws.close(1000);
        await closed;
      }
    },
  };
}

/**
 * An agent that has said hello and been sent its schedule: the server counts it online, so a
 * test may ask it for tree listings or downloads at once.
 */
export async function connectOnlineAgent(
  wsUrl: string,
  token: string,
  hello: Partial<Hello> = {},
): Promise<TestAgent> {
  const agent = await connectAgent(wsUrl, token);
  agent.hello(hello);
  await agent.waitFor((frame) => frame.type === "schedule.set");
  return agent;
}

/**
 * `connectOnlineAgent` on a test server, once the channel has also finished what the hello
 * started (reconciling running jobs, an auto-init): a test then reads the database as it stays.
 */
export async function connectSettledAgent(
  server: { wsUrl: string; channel: { idle(): Promise<void> } },
  token: string,
  hello: Partial<Hello> = {},
): Promise<TestAgent> {
  const agent = await connectOnlineAgent(server.wsUrl, token, hello);
  await server.channel.idle();
  return agent;
}

/** Tries the upgrade and reports the HTTP answer when the server refuses it. */
export function refusedUpgrade(
  wsUrl: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(wsUrl, { headers });
    ws.once("open", () => {
      ws.terminate();
      reject(new Error("upgrade unexpectedly accepted"));
    });
    ws.once("unexpected-response", (_req, res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        body += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    ws.once("error", (err) => reject(err));
  });
}

/**
 * Waits until the server has handled an agent's end of the job: the job left the active states
 * and the channel finished what the report started (alerts, retries).
 */
export async function jobEndHandled(
  server: { deps: Pick<ServerDeps, "db">; channel: { idle(): Promise<void> } },
  jobId: string,
  what = `job ${jobId} to end`,
): Promise<void> {
  await eventually(
    () => readJob(server.deps, jobId),
    (row) => row !== undefined && row.status !== "queued" && row.status !== "running",
    { what },
  );
  await server.channel.idle();
}
