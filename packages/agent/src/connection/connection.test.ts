import {
  CLOSE_CODES,
  createUlidGenerator,
  encode,
  PROTOCOL_VERSION,
  type ServerMessageHandlers,
} from "@fleetback/protocol";
import { createManualTimers, type ManualTimers } from "@fleetback/protocol/manual-timers";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMemoryLogger, type MemoryLogger } from "../testing/memory-logger.js";
import { waitUntil } from "../testing/processes.js";
import { type AgentPeer, startTestServer, type TestServer } from "../testing/test-server.js";
import { type ConnectionOptions, createAgentConnection } from "./connection.js";

const nextId = createUlidGenerator();
const runningJob = nextId();
const identity = {
  agent_version: "0.1.0",
  tool_version: "0.18.0",
  protocol_version: PROTOCOL_VERSION,
  hostname: "vm",
  os: "linux",
  arch: "x64",
};

function recordingHandlers(seen: string[]): ServerMessageHandlers<void> {
  const record = (type: string) => () => {
    seen.push(type);
  };
  return {
    "config.update": record("config.update"),
    "schedule.set": () => {
      throw new Error("handler bug");
    },
    "command.run": record("command.run"),
    "command.cancel": record("command.cancel"),
    "command.update": record("command.update"),
    "tree.list": record("tree.list"),
    "dump.request": record("dump.request"),
    "dump.ack": record("dump.ack"),
    "dump.cancel": record("dump.cancel"),
    "catalog.ack": record("catalog.ack"),
    error: record("error"),
  };
}

let server: TestServer;
let timers: ManualTimers;
let log: MemoryLogger;
let seen: string[];

beforeEach(async () => {
  server = await startTestServer();
  timers = createManualTimers();
  log = createMemoryLogger();
  seen = [];
});
afterEach(async () => {
  await server.stop();
});

function connect(overrides: Partial<ConnectionOptions> = {}) {
  return createAgentConnection({
    target: { serverUrl: server.url, token: "fa_secret-token" },
    identity,
    runningJobIds: () => [runningJob],
    handlers: recordingHandlers(seen),
    log,
    timers,
    random: () => 0.999999,
    ...overrides,
  });
}

/**
 * Sends a frame of its own through the connection and waits for the server to receive it: the
 * socket is ordered, so whatever the agent sent before has arrived too.
 */
async function flush(
  connection: ReturnType<typeof connect>,
  peer: AgentPeer,
  version: number,
): Promise<void> {
  expect(connection.sendFrame(encode("schedule.ack", { version }))).toBe(true);
  await peer.next("schedule.ack");
}

describe("createAgentConnection", () => {
  it("sends hello first, with the bearer token on the upgrade", async () => {
    const connection = connect();
    const outcome = connection.run();
    const peer = await server.nextPeer();
    expect(peer.request.url).toBe("/api/agents/ws");
    expect(peer.request.headers.authorization).toBe("Bearer fa_secret-token");
    const hello = await peer.next("hello");
    expect(peer.received[0]).toBe(hello);
    expect(hello.payload).toEqual({ ...identity, running_job_ids: [runningJob] });
    connection.stop();
    expect(await outcome).toEqual({ kind: "stopped" });
    await peer.closed;
  });

  it("sends a heartbeat every 30 s with the running job ids", async () => {
    const connection = connect();
    void connection.run();
    const peer = await server.nextPeer();
    await peer.next("hello");
    timers.advance(29_999);
    await flush(connection, peer, 1);
    expect(peer.received.filter((message) => message.type === "heartbeat")).toHaveLength(0);
    timers.advance(1);
    expect((await peer.next("heartbeat")).payload).toEqual({ running_job_ids: [runningJob] });
    timers.advance(60_000);
    await peer.next("heartbeat");
    await peer.next("heartbeat");
    await flush(connection, peer, 2);
    expect(peer.received.filter((message) => message.type === "heartbeat")).toHaveLength(3);
    connection.stop();
  });

  it("reconnects after 4000, 4002 and 4008 with growing backoff, reset after 60 s up", async () => {
    const connection = connect();
    void connection.run();
    const reconnects = () => log.entries.filter((entry) => entry.message.includes("reconnecting")).length;
    const expectReconnect = async (code: number, delay: number) => {
      const peer = await server.nextPeer();
      await peer.next("hello");
      const before = reconnects();
      peer.close(code);
      await waitUntil(() => reconnects() > before);
      expect(timers.pendingDelays()).toEqual([delay]);
      timers.advance(delay);
    };
    await expectReconnect(CLOSE_CODES.noHello, 999);
    await expectReconnect(CLOSE_CODES.replaced, 1_999);
    await expectReconnect(CLOSE_CODES.tooManyInvalidFrames, 3_999);
    const stable = await server.nextPeer();
    await stable.next("hello");
    timers.advance(60_000);
    stable.close(CLOSE_CODES.noHello);
    await waitUntil(() => reconnects() === 4);
    expect(timers.pendingDelays()).toEqual([999]);
    connection.stop();
  });

  it("reconnects after a network error", async () => {
    // Nothing listens on port 1: a refused connection, without racing other tests for a port.
    const connection = connect({ target: { serverUrl: "http://127.0.0.1:1", token: "t" } });
    void connection.run();
    await waitUntil(() => timers.pendingDelays().length === 1);
    expect(timers.pendingDelays()).toEqual([999]);
    expect(log.text()).toContain("ECONNREFUSED");
    connection.stop();
  });

  it("is fatal on 4001 and logs the help URL of the preceding error", async () => {
    const connection = connect();
    const outcome = connection.run();
    const peer = await server.nextPeer();
    await peer.next("hello");
    peer.send("error", {
      code: "ErrProtocolTooOld",
      message: "protocol 0 is below the minimum 1",
      help_url: "https://fleetback.example/docs/upgrade-agent",
    });
    peer.close(CLOSE_CODES.protocolTooOld);
    expect(await outcome).toMatchObject({
      kind: "fatal",
      reason: "protocol_too_old",
      helpUrl: "https://fleetback.example/docs/upgrade-agent",
    });
    const fatal = log.entries.find((entry) => entry.level === "error");
    expect(fatal?.fields.help_url).toBe("https://fleetback.example/docs/upgrade-agent");
    expect(timers.pendingDelays()).toEqual([]);
    expect(seen).toEqual(["error"]);
  });

  it("is fatal on 4003", async () => {
    const connection = connect();
    const outcome = connection.run();
    const peer = await server.nextPeer();
    await peer.next("hello");
    peer.close(CLOSE_CODES.hostDeleted, "host deleted");
    expect(await outcome).toMatchObject({ kind: "fatal", reason: "host_deleted" });
    expect(timers.pendingDelays()).toEqual([]);
  });

  it("is fatal when the upgrade is refused with 401, and retries other statuses", async () => {
    server.refuseWith = 503;
    const retrying = connect();
    void retrying.run();
    await waitUntil(() => timers.pendingDelays().length === 1);
    expect(log.text()).toContain("HTTP 503");
    retrying.stop();

    server.refuseWith = 401;
    const outcome = await connect().run();
    expect(outcome).toMatchObject({ kind: "fatal", reason: "unauthorised" });
    expect(outcome.kind === "fatal" && outcome.message).toContain("HTTP 401");
  });

  it("logs and ignores invalid frames, survives a throwing handler, and dispatches the rest", async () => {
    const connection = connect();
    void connection.run();
    const peer = await server.nextPeer();
    await peer.next("hello");
    peer.socket.send("not json");
    peer.socket.send(JSON.stringify({ id: nextId(), type: "hello", payload: {} }));
    peer.socket.send(JSON.stringify({ id: nextId(), type: "command.run", payload: { kind: "init" } }));
    peer.send("schedule.set", { version: 1, schedules: [] });
    peer.send("command.cancel", { job_id: runningJob });
    await waitUntil(() => seen.length === 1);
    expect(seen).toEqual(["command.cancel"]);
    const warnings = log.entries.filter(
      (entry) => entry.message === "ignored an invalid frame from the server",
    );
    expect(warnings.map((entry) => entry.fields.code)).toEqual([
      "invalid_message",
      "unknown_type",
      "invalid_message",
    ]);
    expect(log.entries.some((entry) => entry.message === "handling a server message failed")).toBe(true);
    expect(connection.sendFrame("{}")).toBe(true);
    connection.stop();
  });

  it("calls onAccepted once per connection, on the first valid message that is not an error", async () => {
    let accepted = 0;
    const connection = connect({ onAccepted: () => accepted++ });
    void connection.run();
    const peer = await server.nextPeer();
    await peer.next("hello");
    peer.socket.send("not json");
    peer.send("error", { code: "invalid_message", message: "no" });
    // Frames are handled in order: once the error was, the frame before it was too.
    await waitUntil(() => seen.length === 1);
    expect(seen).toEqual(["error"]);
    expect(accepted).toBe(0);
    peer.send("command.cancel", { job_id: runningJob });
    peer.send("command.cancel", { job_id: runningJob });
    await waitUntil(() => seen.length === 3);
    expect(seen).toEqual(["error", "command.cancel", "command.cancel"]);
    expect(accepted).toBe(1);
    const reconnects = log.entries.filter((entry) => entry.message.includes("reconnecting")).length;
    peer.close(4000, "again");
    await peer.closed;
    await waitUntil(
      () => log.entries.filter((entry) => entry.message.includes("reconnecting")).length > reconnects,
    );
    timers.advance(60_000);
    const second = await server.nextPeer();
    await second.next("hello");
    second.send("command.cancel", { job_id: runningJob });
    await waitUntil(() => accepted === 2);
    connection.stop();
  });
});
