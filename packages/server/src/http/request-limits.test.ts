/**
 * What one anonymous request may make the server hold or wait for: bodies over 1 MiB end in 413
 * before they are read or authenticated (declared or streamed), long URLs in 414, huge headers in
 * 431, deep JSON in a named 400 without a parse that blocks the loop, and a client that sends
 * its headers too slowly is cut off. Runs against the real server (startServer) on a real port.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../log.js";
import { type RunningServer, startServer } from "../server.js";
import { testConfig } from "../testing/test-deps.js";
import { MAX_BODY_BYTES, SERVER_TIMEOUTS } from "./request-limits.js";

let root: string;
let server: RunningServer;
let port: number;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "fleetback-limits-"));
  server = await startServer(
    testConfig({ dataDir: join(root, "data"), listen: { host: "127.0.0.1", port: 0 } }),
    { log: createLogger("silent") },
  );
  port = Number(new URL(server.url).port);
}, 120_000);
afterAll(async () => {
  await server?.close();
  await rm(root, { recursive: true, force: true });
});

/** Writes `head` (and optionally a body) on a raw socket; resolves with what came back and when. */
function raw(head: string, body?: Buffer): Promise<{ text: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket = connect(port, "127.0.0.1");
    let text = "";
    socket.on("data", (chunk) => {
      text += chunk.toString("latin1");
    });
    socket.on("error", () => undefined);
    socket.on("close", () => resolve({ text, ms: performance.now() - started }));
    socket.setTimeout(SERVER_TIMEOUTS.headersTimeout * 3, () => {
      socket.destroy();
      reject(new Error("server kept a slow connection open"));
    });
    socket.write(head);
    if (body) {
      socket.write(body);
    }
  });
}

async function post(path: string, body: string | ReadableStream<Uint8Array>, type = "application/json") {
  return fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { "Content-Type": type },
    body,
    duplex: "half",
  } as RequestInit);
}

describe("request limits (real server)", () => {
  it("answers 413 to a declared 200 MB login body without reading it, naming the limit", async () => {
    // Only 13 bytes of the 200 MB ever leave this socket: any answer at all proves the server did
    // not wait for the body; how soon it answers is the machine's speed.
    const { text } = await raw(
      `POST /api/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${200 * 1024 * 1024}\r\n\r\n`,
      Buffer.from('{"username":"'),
    );
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
    expect(text).toContain(`"code":"too_large"`);
    expect(text).toContain(`limit of ${MAX_BODY_BYTES} bytes`);
  });

  it("answers 413 to a streamed (chunked) body past the limit, on JSON and form routes", async () => {
    for (const [path, type] of [
      ["/api/auth/login", "application/json"],
      ["/api/agents/enroll", "application/json"],
      ["/login", "application/x-www-form-urlencoded"],
    ] as const) {
      const chunk = new Uint8Array(64 * 1024).fill(0x61);
      let sent = 0;
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent > 4 * MAX_BODY_BYTES) {
            controller.close();
            return;
          }
          sent += chunk.length;
          controller.enqueue(chunk);
        },
      });
      const res = await post(path, stream, type);
      expect([path, res.status]).toEqual([path, 413]);
      const body = (await res.json()) as { code: string; message: string };
      expect(body.code).toBe("too_large");
      expect(body.message).toContain(String(MAX_BODY_BYTES));
    }
  });

  it("still reads a body just under the limit (a 400 naming the field, not a 413)", async () => {
    const res = await post(
      "/api/auth/login",
      JSON.stringify({ username: "a".repeat(MAX_BODY_BYTES - 100), password: "x" }),
    );
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toMatch(/^username: /);
  });

  it("refuses deeply nested JSON by name, before JSON.parse sees it", async () => {
    // Never closed, so JSON.parse would call it not JSON: the depth scan answers first. How long
    // a parse of such a body would block the event loop is a speed figure, not this test's.
    const nested = "[".repeat(MAX_BODY_BYTES - 10);
    const res = await post("/api/auth/login", nested);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toMatch(/^body: nests deeper than/);
  });

  it("answers 414 to a URL past 16 KiB and 431 to headers past 32 KiB", async () => {
    const long = await fetch(`${server.url}/login?next=/${"a".repeat(17 * 1024)}`);
    expect(long.status).toBe(414);
    expect(((await long.json()) as { code: string }).code).toBe("uri_too_long");
    const { text } = await raw(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${"b".repeat(40 * 1024)}\r\n\r\n`);
    expect(text).toMatch(/^HTTP\/1\.1 431 /);
  });

  it(
    "closes a connection whose headers never finish (slowloris) after the headers timeout",
    async () => {
      const { text, ms } = await raw("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
      expect(text).toMatch(/^HTTP\/1\.1 408 /);
      // The 408 is the headers timeout's, never earlier; how soon after it is the machine's speed.
      expect(ms).toBeGreaterThanOrEqual(SERVER_TIMEOUTS.headersTimeout - 50);
    },
    SERVER_TIMEOUTS.headersTimeout * 4,
  );
});
