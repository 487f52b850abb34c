import { createServer as createHttpsServer } from "node:https";
import type { Socket } from "node:net";
import { createServer as createTlsServer, type Server as TlsServer } from "node:tls";
import { PROTOCOL_VERSION, type ServerMessageHandlers } from "@fleetback/protocol";
import { createManualTimers } from "@fleetback/protocol/manual-timers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocketServer } from "ws";
import { createAgentConnection } from "../connection/connection.js";
import { portOf } from "../testing/http-stub.js";
import { createMemoryLogger } from "../testing/memory-logger.js";
import { waitUntil } from "../testing/processes.js";
import { createSelfSigned } from "../testing/self-signed.js";
import { requestJson } from "./json-request.js";
import { normalizePin, TlsPinMismatchError } from "./tls-pin.js";

const cert = createSelfSigned();
const WRONG_PIN = "00".repeat(32);

describe("normalizePin", () => {
  it("accepts hex in either case, with or without colons", () => {
    const hex = "ab".repeat(32);
    expect(normalizePin(hex.toUpperCase())).toBe(hex);
    expect(normalizePin(hex.match(/../g)?.join(":") ?? "")).toBe(hex);
    expect(normalizePin(` ${hex}\n`)).toBe(hex);
  });
  it.each(["", "ab", "zz".repeat(32), "ab".repeat(33)])("refuses %j", (pin) => {
    expect(normalizePin(pin)).toBeUndefined();
  });
});

const noHandlers: ServerMessageHandlers<void> = {
  "config.update": () => {},
  "schedule.set": () => {},
  "command.run": () => {},
  "command.cancel": () => {},
  "command.update": () => {},
  "tree.list": () => {},
  "dump.request": () => {},
  "dump.ack": () => {},
  "dump.cancel": () => {},
  "catalog.ack": () => {},
  error: () => {},
};

describe.skipIf(cert === undefined)(`TLS pinning${cert ? "" : " (skipped: openssl not found)"}`, () => {
  const pem = cert ?? { key: "", cert: "", fingerprint256: "" };
  const pin = normalizePin(pem.fingerprint256) ?? "";
  let raw: TlsServer;
  let rawUrl = "";
  const cleartext: Buffer[] = [];
  const connections: Array<{ closed: boolean }> = [];

  beforeAll(async () => {
    // A bare TLS server records every byte a client sends after the handshake, and which of its
    // TCP connections are over (every byte of a closed one has arrived).
    raw = createTlsServer({ key: pem.key, cert: pem.cert }, (socket) => {
      socket.on("data", (chunk: Buffer) => {
        cleartext.push(chunk);
        socket.end("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}");
      });
      socket.on("error", () => {});
    });
    raw.on("connection", (tcp: Socket) => {
      const connection = { closed: false };
      connections.push(connection);
      tcp.on("close", () => {
        connection.closed = true;
      });
    });
    await new Promise<void>((resolve) => raw.listen(0, "127.0.0.1", resolve));
    rawUrl = `https://127.0.0.1:${portOf(raw)}`;
  });
  afterAll(() => new Promise<void>((resolve) => raw.close(() => resolve())));

  it("sends the request to a server whose certificate matches the pin, self-signed or not", async () => {
    cleartext.length = 0;
    const response = await requestJson({
      method: "POST",
      url: `${rawUrl}/api/agents/enroll`,
      body: { token: "t" },
      tlsPin: pin,
    });
    expect(response.status).toBe(200);
    expect(Buffer.concat(cleartext).toString()).toContain("POST /api/agents/enroll");
  });

  it("sends not one byte to a server whose certificate does not match", async () => {
    cleartext.length = 0;
    const before = connections.length;
    const failure = requestJson({
      method: "POST",
      url: `${rawUrl}/x`,
      body: { token: "secret" },
      tlsPin: WRONG_PIN,
    });
    await expect(failure).rejects.toThrow(/TLS pin mismatch/);
    // Once the server has seen the client's connection close, whatever it sent has arrived.
    await waitUntil(() => connections.length > before && connections.slice(before).every((c) => c.closed));
    expect(cleartext).toEqual([]);
  });

  it("keeps CA validation when no pin is configured", async () => {
    await expect(requestJson({ method: "GET", url: `${rawUrl}/healthz` })).rejects.toThrow(/self[- ]signed/);
  });

  it("pins the WebSocket: hello with the right pin, no upgrade and no token with a wrong one", async () => {
    const https = createHttpsServer({ key: pem.key, cert: pem.cert });
    const wss = new WebSocketServer({ server: https });
    const upgrades: string[] = [];
    https.on("upgrade", (request) => upgrades.push(String(request.headers.authorization)));
    const hellos: string[] = [];
    wss.on("connection", (socket) => socket.on("message", (data: Buffer) => hellos.push(data.toString())));
    await new Promise<void>((resolve) => https.listen(0, "127.0.0.1", resolve));
    const serverUrl = `https://127.0.0.1:${portOf(https)}`;
    const connectWith = (tlsPin: string) => {
      const log = createMemoryLogger();
      const timers = createManualTimers();
      const connection = createAgentConnection({
        target: { serverUrl, token: "fa_token", tlsPin },
        identity: {
          agent_version: "0.1.0",
          tool_version: "",
          protocol_version: PROTOCOL_VERSION,
          hostname: "h",
          os: "linux",
          arch: "x64",
        },
        runningJobIds: () => [],
        handlers: noHandlers,
        log,
        timers,
      });
      void connection.run();
      return { connection, log, timers };
    };
    try {
      const wrong = connectWith(WRONG_PIN);
      await waitUntil(() => wrong.timers.pendingDelays().length === 1);
      expect(wrong.log.entries.find((entry) => entry.level === "error")?.message).toMatch(
        /^TLS pin mismatch/,
      );
      expect(upgrades).toEqual([]);
      wrong.connection.stop();

      const right = connectWith(pin);
      await waitUntil(() => hellos.length === 1);
      expect(upgrades).toEqual(["Bearer fa_token"]);
      expect(JSON.parse(hellos[0] ?? "{}").type).toBe("hello");
      right.connection.stop();
    } finally {
      for (const client of wss.clients) {
        client.terminate();
      }
      https.closeAllConnections();
      await new Promise<void>((resolve) => https.close(() => resolve()));
    }
  });

  it("names both fingerprints in the error", () => {
    const error = new TlsPinMismatchError("aa", "bb");
    expect(error.message).toContain("aa");
    expect(error.message).toContain("bb");
  });
});
