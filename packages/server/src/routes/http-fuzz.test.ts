/**
 * HTTP fuzz over every JSON and form route of the app's route table (the table route-roles.test.ts
 * checks): invalid, oversized, deeply nested and wrong-typed bodies, as a signed-in admin with our
 * Origin and the session's CSRF token, so the bodies reach validation. Every answer must be a 4xx
 * (a 400 naming its field, or 413 for a body past the limit), never a 500, and the process's
 * memory must stay flat. Bounded: under 2,000 requests, seeded, on a real port.
 */
import { request } from "node:http";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../app.js";
import { MAX_BODY_BYTES } from "../http/request-limits.js";
import { MAX_JSON_DEPTH } from "../http/validate.js";
import { forceGc } from "../testing/force-gc.js";
import { csrfFrom } from "../testing/http.js";
import { seedHost } from "../testing/seed.js";
import { signInOn } from "../testing/signed-in-app.js";
import { startTestServer, type TestServer } from "../testing/test-server.js";

const MAX_REQUESTS = 2_000;
/** Would end the fuzzing session, or delete the host the other routes are fuzzed against. */
const SKIPPED = new Set([
  "POST /api/auth/logout",
  "POST /logout",
  "DELETE /api/hosts/:id",
  "POST /hosts/:id/delete",
]);
/** Field names the routes' schemas use, to send with the wrong types. */
const FIELDS = [
  "name",
  "username",
  "password",
  "role",
  "token",
  "hostname",
  "paths",
  "excludes",
  "url",
  "enabled",
  "cron",
  "keep_last",
  "snapshot_id",
  "target_dir",
  "host_ids",
  "version",
  "kind",
  "config",
  "ids",
  "expires_at",
  "bootstrap_token",
];
const WRONG_VALUES: unknown[] = [
  123,
  -1,
  1e308,
  true,
  null,
  [],
  [1, "a"],
  {},
  { nested: [null] },
  "",
  "\u0000",
];

/** Small seeded PRNG (mulberry32), so a failure replays. */
function random(seed: number) {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Body {
  kind: string;
  type: string;
  body: string | Uint8Array | (() => ReadableStream<Uint8Array>);
  oversized?: boolean;
}

/** A body of `size` bytes produced while it is sent, so the client never holds it. */
function streamOf(size: number, fill = 0x61): () => ReadableStream<Uint8Array> {
  return () => {
    const chunk = new Uint8Array(64 * 1024).fill(fill);
    let sent = 0;
    return new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= size) {
          controller.close();
          return;
        }
        sent += chunk.length;
        controller.enqueue(chunk);
      },
    });
  };
}

function wrongTyped(next: () => number): Record<string, unknown> {
  const value: Record<string, unknown> = {};
  for (const field of FIELDS) {
    if (next() < 0.5) {
      value[field] = WRONG_VALUES[Math.floor(next() * WRONG_VALUES.length)];
    }
  }
  return value;
}

function mutate(text: string, next: () => number): string {
  const chars = [...text];
  for (let i = 0; i < 4; i++) {
    const at = Math.floor(next() * (chars.length + 1));
    chars.splice(at, next() < 0.5 ? 1 : 0, String.fromCharCode(Math.floor(next() * 128)));
  }
  return chars.join("");
}

function jsonBodies(next: () => number): Body[] {
  const json = "application/json";
  const deepObject = `${'{"a":'.repeat(MAX_JSON_DEPTH + 8)}1${"}".repeat(MAX_JSON_DEPTH + 8)}`;
  const half = Math.floor(MAX_BODY_BYTES / 2) - 16;
  return [
    { kind: "not json", type: json, body: '{"name":' },
    { kind: "empty", type: json, body: "" },
    { kind: "null", type: json, body: "null" },
    { kind: "array", type: json, body: "[1,2,3]" },
    { kind: "string", type: json, body: '"x"' },
    { kind: "wrong types", type: json, body: JSON.stringify(wrongTyped(next)) },
    { kind: "wrong types 2", type: json, body: JSON.stringify(wrongTyped(next)) },
    { kind: "deep object", type: json, body: deepObject },
    { kind: "deep 1 MiB", type: json, body: `${"[".repeat(half)}${"]".repeat(half)}` },
    { kind: "huge string", type: json, body: JSON.stringify({ name: "n".repeat(MAX_BODY_BYTES - 64) }) },
    { kind: "prototype", type: json, body: '{"__proto__":{"role":"admin"},"constructor":{"prototype":{}}}' },
    { kind: "mutated", type: json, body: mutate(JSON.stringify(wrongTyped(next)), next) },
    { kind: "oversized", type: json, body: streamOf(MAX_BODY_BYTES + 64 * 1024), oversized: true },
  ];
}

function formBodies(next: () => number, csrf: string): Body[] {
  const form = "application/x-www-form-urlencoded";
  const with_ = (text: string) => `_csrf=${encodeURIComponent(csrf)}&${text}`;
  const boundary = "fuzzboundary";
  const multipart = [
    `--${boundary}`,
    'Content-Disposition: form-data; name="_csrf"',
    "",
    csrf,
    `--${boundary}`,
    'Content-Disposition: form-data; name="name"; filename="x.bin"',
    "Content-Type: application/octet-stream",
    "",
    "\u0000\u0001binary",
    `--${boundary}--`,
    "",
  ].join("\r\n");
  const wrong = Object.entries(wrongTyped(next))
    .map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(JSON.stringify(value))}`)
    .join("&");
  return [
    { kind: "form empty", type: form, body: with_("") },
    { kind: "form bad percent", type: form, body: with_("name=%ZZ%&password=%") },
    { kind: "form repeated", type: form, body: with_("name=a&name=b&role=x&role=y") },
    { kind: "form unknown field", type: form, body: with_("zzz=1&__proto__=x") },
    { kind: "form wrong types", type: form, body: with_(wrong) },
    { kind: "form huge field", type: form, body: with_(`name=${"n".repeat(MAX_BODY_BYTES - 256)}`) },
    { kind: "form file", type: `multipart/form-data; boundary=${boundary}`, body: multipart },
    { kind: "form mutated", type: form, body: mutate(with_(wrong), next) },
    { kind: "form oversized", type: form, body: streamOf(MAX_BODY_BYTES + 64 * 1024), oversized: true },
  ];
}

let server: TestServer;
let cookie = "";
let csrf = "";
let hostId = "";
let origin = "";

/**
 * One request on its own connection (node:http, agent: false): a route that answers without
 * reading a body lets the server drop the connection, which must not fail the next request.
 */
function send(method: string, path: string, body: Body): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const payload = typeof body.body === "function" ? undefined : body.body;
    const size =
      typeof body.body === "function" ? MAX_BODY_BYTES + 64 * 1024 : Buffer.byteLength(payload ?? "");
    let answered = false;
    const req = request(
      `${server.url}${path}`,
      {
        method,
        agent: false,
        headers: { "Content-Type": body.type, Origin: origin, Cookie: cookie, "Content-Length": size },
      },
      (res) => {
        answered = true;
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
        res.on("error", reject);
      },
    );
    // The server may answer (413) and close while the rest of an oversized body is still going out.
    req.on("error", (err) => {
      if (!answered) {
        reject(err);
      }
    });
    if (typeof body.body === "function") {
      Readable.fromWeb(body.body() as import("node:stream/web").ReadableStream).pipe(req);
    } else {
      req.end(payload);
    }
  });
}

function rss(): number {
  forceGc();
  return process.memoryUsage().rss;
}

beforeAll(async () => {
  server = await startTestServer();
  origin = new URL(server.deps.config.baseUrl).origin;
  cookie = (await signInOn(server.deps, { adminName: "fuzz-admin" })).admin.cookie ?? "";
  csrf = csrfFrom(
    await (await fetch(`${server.url}/settings/tokens`, { headers: { Cookie: cookie } })).text(),
  );
  hostId = (await seedHost(server.deps)).host.id;
}, 120_000);
afterAll(async () => {
  await server?.close();
});

describe("HTTP fuzz over the route table", () => {
  it("answers only 4xx naming the field (or 413), never 5xx, with flat memory", async () => {
    const routes = new Map<string, { method: string; path: string }>();
    for (const route of createApp(server.deps).routes) {
      const key = `${route.method} ${route.path}`;
      if (["POST", "PUT", "PATCH", "DELETE"].includes(route.method) && !SKIPPED.has(key)) {
        routes.set(key, { method: route.method, path: route.path });
      }
    }
    expect(routes.size).toBeGreaterThan(50);
    const next = random(13);
    const started = performance.now();
    const before = rss();
    const failures: string[] = [];
    let requests = 0;
    let slowest = { ms: 0, what: "" };
    let deepest = 0;
    for (const [key, route] of routes) {
      const path = route.path
        .replace(":id", hostId)
        .replace(":slot", "repo")
        .replace(/:[a-z]+/g, "01JD0000000000000000000000");
      const bodies = path.startsWith("/api/") ? jsonBodies(next) : formBodies(next, csrf);
      for (const body of bodies) {
        requests++;
        const sentAt = performance.now();
        let res: { status: number; text: string };
        try {
          res = await send(route.method, path, body);
        } catch (err) {
          failures.push(`${key} [${body.kind}] → no answer: ${String((err as Error).cause ?? err)}`);
          continue;
        }
        const { text } = res;
        const ms = performance.now() - sentAt;
        if (body.kind === "deep 1 MiB") {
          deepest = Math.max(deepest, ms);
        }
        if (ms > slowest.ms) {
          slowest = { ms, what: `${key} ${body.kind}` };
        }
        const what = `${key} [${body.kind}] → ${res.status} ${text.slice(0, 160)}`;
        let parsed: { code?: string; message?: string } = {};
        try {
          parsed = JSON.parse(text) as typeof parsed;
        } catch {
          // Retired page routes answer 410 with a sentence for the person who followed an old form.
          const retired = res.status === 410 && !path.startsWith("/api/");
          // A form whose fields are all optional (the enrol form) may succeed with none of them.
          const valid = body.kind === "form empty" && res.status < 400;
          // A page form refused for a person (the recovery kit's re-authentication) shows its form
          // again with the sentence: a 4xx page holding a form, never a bare error.
          const shownAgain =
            !path.startsWith("/api/") && res.status >= 400 && res.status < 500 && /<form[\s>]/.test(text);
          if (!retired && !valid && !shownAgain) {
            failures.push(`${what} (not JSON)`);
          }
          continue;
        }
        if (body.oversized) {
          if (res.status !== 413 || !parsed.message?.includes(String(MAX_BODY_BYTES))) {
            failures.push(what);
          }
        } else if ((res.status < 400 && body.kind !== "form empty") || res.status >= 500) {
          failures.push(what);
        } else if (res.status === 400 && !/^[A-Za-z_][\w.]*: /.test(parsed.message ?? "")) {
          failures.push(`${what} (400 without a field name)`);
        } else if (typeof parsed.code !== "string" || typeof parsed.message !== "string") {
          failures.push(`${what} (no code/message)`);
        }
      }
    }
    const grown = rss() - before;
    const seconds = (performance.now() - started) / 1000;
    // Read in the report: how long the worst single request (the loop is blocked at most that long) took.
    console.info(
      `http fuzz: ${requests} requests over ${routes.size} routes in ${seconds.toFixed(1)} s; ` +
        `slowest ${slowest.ms.toFixed(0)} ms (${slowest.what}); 1 MiB nested JSON at most ${deepest.toFixed(0)} ms; ` +
        `rss ${(grown / 2 ** 20).toFixed(1)} MiB`,
    );
    expect(failures).toEqual([]);
    // How long the run took is printed above, not asserted: it is the machine's speed.
    expect(requests).toBeLessThanOrEqual(MAX_REQUESTS);
    // Bodies are capped at 1 MiB and never held past their request; without the cap this grew by
    // hundreds of MiB. The bound leaves room for the allocator's noise.
    expect(grown).toBeLessThan(96 * 2 ** 20);
    // A guard against a hang, not a budget: the run's length is printed above. Beside the other
    // suites on a 2-core machine the ~70 routes' bodies took over two minutes.
  }, 300_000);
});
