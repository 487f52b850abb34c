/**
 * @module testing/test-server
 * A minimal stand-in for the server's agent endpoint: a real `ws` WebSocketServer on port 0 that
 * speaks the protocol through @fleetback/protocol's encode/decode, so agent tests exercise real
 * sockets and real frames without the server package.
 */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import {
  type AgentEnvelope,
  type AgentMessageType,
  decodeAgentMessage,
  encode,
  type PayloadOf,
  type ServerMessageType,
} from "@fleetback/protocol";
import { afterEach, beforeEach } from "vitest";
import { type WebSocket, WebSocketServer } from "ws";
import { systemTimers } from "../time/timers.js";

export interface AgentPeer {
  readonly socket: WebSocket;
  readonly request: IncomingMessage;
  readonly received: AgentEnvelope[];
  send<K extends ServerMessageType>(type: K, payload: PayloadOf<K>, id?: string): void;
  /** The next (or an already received, not yet taken) message of `type`. */
  next<K extends AgentMessageType>(type: K, timeoutMs?: number): Promise<Extract<AgentEnvelope, { type: K }>>;
  /** The first defined answer of `take`, asked now and again at every message received. */
  until<T>(take: () => T | undefined, timeoutMs?: number, what?: string): Promise<T>;
  close(code: number, reason?: string): void;
  readonly closed: Promise<void>;
}

export interface TestServer {
  url: string;
  readonly server: Server;
  /** The next agent connection (or one that arrived and was not taken yet). */
  nextPeer(timeoutMs?: number): Promise<AgentPeer>;
  /** Plain HTTP requests (update downloads, say); answer and return true, or false for a 404. */
  handleHttp: ((request: IncomingMessage, response: ServerResponse) => boolean) | undefined;
  /** Status the upgrade is refused with; undefined accepts. */
  refuseWith: number | undefined;
  readonly upgradeRequests: IncomingMessage[];
  stop(): Promise<void>;
}

function waitFor<T>(
  take: () => T | undefined,
  wake: (attempt: () => boolean) => void,
  timeoutMs: number,
  what: string,
) {
  return new Promise<T>((resolve, reject) => {
    const attempt = () => {
      const value = take();
      if (value !== undefined) {
        cancelTimer();
        resolve(value);
        return true;
      }
      return false;
    };
    const cancelTimer = systemTimers.after(timeoutMs, () =>
      reject(new Error(`timed out waiting for ${what}`)),
    );
    if (!attempt()) {
      wake(attempt);
    }
  });
}

function createPeer(socket: WebSocket, request: IncomingMessage): AgentPeer {
  const received: AgentEnvelope[] = [];
  const taken = new Set<AgentEnvelope>();
  let listeners: (() => boolean)[] = [];
  const closed = new Promise<void>((resolve) => socket.on("close", () => resolve()));
  socket.on("message", (data: Buffer) => {
    const result = decodeAgentMessage(data);
    if (!result.ok) {
      throw new Error(`agent sent an invalid frame: ${result.error.message}`);
    }
    received.push(result.message);
    listeners = listeners.filter((listener) => !listener());
  });
  return {
    socket,
    request,
    received,
    closed,
    send(type, payload, id) {
      socket.send(encode(type, payload, id));
    },
    next<K extends AgentMessageType>(type: K, timeoutMs = 10_000) {
      const take = () => {
        const found = received.find(
          (message): message is Extract<AgentEnvelope, { type: K }> =>
            message.type === type && !taken.has(message),
        );
        if (found) {
          taken.add(found);
        }
        return found;
      };
      return waitFor(take, (attempt) => listeners.push(attempt), timeoutMs, `a ${type} message`);
    },
    until(take, timeoutMs = 10_000, what = "a condition on the messages received") {
      return waitFor(take, (attempt) => listeners.push(attempt), timeoutMs, what);
    },
    close(code, reason) {
      socket.close(code, reason);
    },
  };
}

export async function startTestServer(): Promise<TestServer> {
  const server = createServer((request, response) => {
    if (!test.handleHttp?.(request, response)) {
      response.writeHead(404).end();
    }
  });
  const wss = new WebSocketServer({ noServer: true });
  const peers: AgentPeer[] = [];
  let listeners: (() => boolean)[] = [];
  const upgradeRequests: IncomingMessage[] = [];
  const test: TestServer = {
    url: "",
    server,
    handleHttp: undefined,
    refuseWith: undefined,
    upgradeRequests,
    nextPeer(timeoutMs = 10_000) {
      return waitFor(
        () => peers.shift(),
        (attempt) => listeners.push(attempt),
        timeoutMs,
        "an agent connection",
      );
    },
    async stop() {
      for (const client of wss.clients) {
        client.terminate();
      }
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  server.on("upgrade", (request, socket, head) => {
    upgradeRequests.push(request);
    if (test.refuseWith !== undefined) {
      const body = JSON.stringify({ code: "unauthorised", message: "invalid agent token" });
      socket.end(
        `HTTP/1.1 ${test.refuseWith} Refused\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`,
      );
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => {
      peers.push(createPeer(ws, request));
      listeners = listeners.filter((listener) => !listener());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") {
    throw new Error("the test server has no TCP address");
  }
  test.url = `http://127.0.0.1:${address.port}`;
  return test;
}

/**
 * A fresh test server for each test of the calling file, stopped after it; call the returned
 * function for the current one. Vitest runs after-hooks in reverse, so an afterEach the file
 * registers later (stopping its harness, say) runs while this server still listens.
 */
export function useTestServer(): () => TestServer {
  let current: TestServer | undefined;
  beforeEach(async () => {
    current = await startTestServer();
  });
  afterEach(async () => {
    await current?.stop();
    current = undefined;
  });
  return () => {
    if (current === undefined) {
      throw new Error("the test server runs only inside a test");
    }
    return current;
  };
}
