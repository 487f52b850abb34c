/**
 * WebSocket fuzz against the live agent socket (issue 13): 100,000 random and mutated frames,
 * built from the protocol's golden fixtures, over several connections of enrolled hosts, on a real
 * port with a real `ws` client. Asserted: the server neither crashes nor logs a failed handler (an
 * unhandled rejection fails the run by itself), its heap is flat once the work has drained, and a
 * well-behaved host connected all along gets a job dispatched and answered and stays online.
 *
 * Most frames still decode (odd but valid: log lines for unknown jobs, replies nobody waits for),
 * so that a connection lives long enough to exercise the handlers; about one in ten is invalid, so
 * the invalid-frame limiter closes a connection every couple of hundred frames and it reconnects.
 * Seeded, so a failure can be replayed; bounded to about a minute.
 */
import { readdirSync, readFileSync } from "node:fs";
import { hashToken } from "@fleetback/crypto";
import { newMessageId } from "@fleetback/protocol";
import { afterAll, beforeAll, expect, it } from "vitest";
import { WebSocket } from "ws";
import { mintJobId } from "../jobs/create-job.js";
import { startJob } from "../jobs/start-job.js";
import { eventually } from "../testing/eventually.js";
import { forceGc } from "../testing/force-gc.js";
import { readHost, readJob, seedHost } from "../testing/seed.js";
import { connectAgent, helloPayload } from "../testing/test-agent.js";
import { startTestServer, type TestServer } from "../testing/test-server.js";

const TOTAL_FRAMES = 100_000;
const CONNECTIONS = 6;
const BATCH = 400;
/**
 * A hang guard, not a budget: every frame is always sent (a loaded CI machine sent 52,000 of
 * 100,000 within the 75 s this once stopped at, and the test then failed on the count).
 */
const TIME_LIMIT_MS = 300_000;
const HEAP_GROWTH_LIMIT = 48 * 2 ** 20;
const SEED = Number(process.env.FLEETBACK_FUZZ_SEED ?? 20261123);

const FIXTURES_DIR = new URL("../../../protocol/fixtures/", import.meta.url);

interface Frame {
  id: string;
  type: string;
  payload: Record<string, unknown>;
}

function loadFixtures(): Frame[] {
  const frames: Frame[] = [];
  for (const direction of ["agent-to-server", "server-to-agent"]) {
    const dir = new URL(`${direction}/`, FIXTURES_DIR);
    for (const name of readdirSync(dir)) {
      frames.push(JSON.parse(readFileSync(new URL(name, dir), "utf8")) as Frame);
    }
  }
  return frames;
}

/** mulberry32: small, seeded, good enough to pick mutations. */
function createRandom(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (max: number) => Math.floor(next() * max);
  return {
    next,
    int,
    pick: <T>(items: readonly T[]): T => items[int(items.length)] as T,
    chance: (p: number) => next() < p,
  };
}
type Random = ReturnType<typeof createRandom>;

function randomString(random: Random, length: number): string {
  let out = "";
  for (let i = 0; i < length; i += 1) {
    out += String.fromCharCode(random.chance(0.9) ? 32 + random.int(95) : random.int(0x10000));
  }
  return out;
}

function randomValue(random: Random, depth = 0): unknown {
  switch (random.int(depth > 2 ? 6 : 8)) {
    case 0:
      return null;
    case 1:
      return random.chance(0.5);
    case 2:
      return random.pick([0, -1, 1.5, 2 ** 53, -(2 ** 63), 1e308, Number.MAX_SAFE_INTEGER + 2]);
    case 3:
      return randomString(random, random.int(40));
    case 4:
      return newMessageId();
    case 5:
      return "2026-11-23T10:00:00Z";
    case 6:
      return Array.from({ length: random.int(4) }, () => randomValue(random, depth + 1));
    default:
      return Object.fromEntries(
        Array.from({ length: random.int(4) }, () => [
          randomString(random, 6),
          randomValue(random, depth + 1),
        ]),
      );
  }
}

function nested(depth: number): string {
  return `${"[".repeat(depth)}1${"]".repeat(depth)}`;
}

const AGENT_TYPES = [
  "hello",
  "heartbeat",
  "schedule.ack",
  "schedule.fire",
  "job.started",
  "job.progress",
  "job.finished",
  "log.stream",
  "snapshots.report",
  "repo.stats",
  "tree.list.result",
  "update.result",
];

/** One invalid (or hostile) frame: a mutation of a fixture, or noise. */
function invalidFrame(random: Random, fixtures: Frame[], allTypes: string[]): string | Buffer {
  const base = structuredClone(random.pick(fixtures));
  const keys = Object.keys(base.payload);
  const key = keys.length > 0 ? random.pick(keys) : "x";
  switch (random.int(12)) {
    case 0: // another message's type, or one of the other direction
      base.type = random.chance(0.8) ? random.pick(allTypes) : randomString(random, random.int(80));
      return JSON.stringify(base);
    case 1: // a field dropped
      delete base.payload[key];
      return JSON.stringify(base);
    case 2: {
      // a field duplicated in the text (JSON.parse keeps the last), with a wrong-typed last value
      const text = JSON.stringify(base);
      return text.replace(
        /"payload":\{/,
        `"payload":{${JSON.stringify(key)}:${JSON.stringify(randomValue(random))},`,
      );
    }
    case 3: // a wrong type
      base.payload[key] = randomValue(random);
      return JSON.stringify(base);
    case 4: {
      // A huge string: mostly under the frame limit, now and then over it (invalid_message), and
      // rarely over the socket's payload limit (ws closes 1009). Those under it stay below 20 KB:
      // at up to 200 KB they were 600 MB of the run's traffic and most of its time, and proved
      // nothing a 20 KB string does not (the limits are crossed by the rarer ones).
      const roll = random.next();
      base.payload[key] = "h".repeat(
        roll < 0.004 ? 4_300_000 : roll < 0.02 ? 1_100_000 : 1_000 + random.int(19_000),
      );
      return JSON.stringify(base);
    }
    case 5: // deep nesting
      return `{"id":"${newMessageId()}","type":"${base.type}","payload":{"${key}":${nested(33 + random.int(3_000))}}}`;
    case 6: // envelope broken
      return JSON.stringify(
        random.pick([{ ...base, id: randomValue(random) }, { type: base.type }, [base], base.payload, null]),
      );
    case 7: // random text
      return randomString(random, random.int(300));
    case 8: // random bytes as a binary frame (invalid UTF-8 most of the time)
      return Buffer.from(Array.from({ length: random.int(300) }, () => random.int(256)));
    case 9: // truncated JSON
      return JSON.stringify(base).slice(0, random.int(60));
    case 10: // prototype games
      return `{"id":"${newMessageId()}","type":"${base.type}","payload":{"__proto__":{"polluted":1},"constructor":{"prototype":{"x":1}}}}`;
    default: // the payload replaced wholesale
      return JSON.stringify({ ...base, payload: randomValue(random) });
  }
}

/** A frame that decodes but names nothing real: cheap for the server, keeps the socket open. */
function oddValidFrame(random: Random, fixtures: Frame[], jobIds: string[]): string {
  const roll = random.next();
  if (roll < 0.6) {
    return JSON.stringify({
      id: newMessageId(),
      type: "log.stream",
      payload: {
        job_id: random.pick(jobIds),
        stream: random.pick(["stdout", "stderr", "agent"]),
        line: randomString(random, random.chance(0.002) ? 60_000 : random.int(200)),
        ts: "2026-11-23T10:00:00Z",
      },
    });
  }
  if (roll < 0.9) {
    return JSON.stringify({
      id: newMessageId(),
      type: "tree.list.result",
      payload: { path: "/", entries: [] },
    });
  }
  // Any agent fixture as it is (a second hello is refused as invalid, the rest is handled).
  const agentFixtures = fixtures.filter(
    (frame) => AGENT_TYPES.includes(frame.type) && frame.type !== "hello",
  );
  return JSON.stringify({ ...random.pick(agentFixtures), id: newMessageId() });
}

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});

afterAll(async () => {
  await server?.close();
});

it("100,000 random and mutated frames: no crash, no failed handler, flat heap, other hosts unaffected", async () => {
  const random = createRandom(SEED);
  const fixtures = loadFixtures();
  const allTypes = [...new Set(fixtures.map((frame) => frame.type))];
  const jobIds = Array.from({ length: 8 }, () => newMessageId());
  const fuzzHosts = await Promise.all(
    Array.from({ length: CONNECTIONS }, (_, i) => seedHost(server.deps, { name: `fuzz-${i}` })),
  );

  // The well-behaved host, connected before and during the fuzz.
  const good = await seedHost(server.deps, { name: "good" });
  const goodAgent = await connectAgent(server.wsUrl, good.token);
  goodAgent.hello({ hostname: "good" });
  await goodAgent.waitFor((frame) => frame.type === "schedule.set");

  // A warm-up round, so that the heap baseline includes what the first connections allocate.
  const warm = await connectAgent(server.wsUrl, fuzzHosts[0]?.token ?? "");
  warm.hello({ hostname: "fuzz-0" });
  await warm.waitFor((frame) => frame.type === "schedule.set");
  await warm.close();
  await server.channel.idle();
  forceGc();
  const heapBefore = process.memoryUsage().heapUsed;

  const started = Date.now();
  let sent = 0;
  let connections = 0;
  const closeCodes = new Map<number, number>();

  async function open(token: string, hostname: string): Promise<WebSocket> {
    const ws = new WebSocket(server.wsUrl, { headers: { authorization: `Bearer ${token}` } });
    ws.on("error", () => {});
    ws.on("close", (code) => closeCodes.set(code, (closeCodes.get(code) ?? 0) + 1));
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("unexpected-response", (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
    });
    connections += 1;
    ws.send(JSON.stringify({ id: newMessageId(), type: "hello", payload: helloPayload({ hostname }) }));
    return ws;
  }

  /** Resolves once the server has read everything sent so far (its pong), or the socket closed. */
  function drained(ws: WebSocket): Promise<void> {
    return new Promise((resolve) => {
      if (ws.readyState !== WebSocket.OPEN) {
        resolve();
        return;
      }
      const done = () => {
        ws.off("pong", done);
        ws.off("close", done);
        resolve();
      };
      ws.on("pong", done);
      ws.on("close", done);
      ws.ping();
    });
  }

  async function fuzzConnection(index: number): Promise<void> {
    const host = fuzzHosts[index];
    if (!host) {
      throw new Error("no fuzz host");
    }
    let ws = await open(host.token, `fuzz-${index}`);
    while (sent < TOTAL_FRAMES) {
      if (ws.readyState !== WebSocket.OPEN) {
        // Closed by the invalid-frame limiter (4008), a frame over the payload limit (1009) or a
        // hello refused: reconnect, as an agent would.
        ws = await open(host.token, `fuzz-${index}`);
      }
      for (let i = 0; i < BATCH && sent < TOTAL_FRAMES; i += 1) {
        const frame = random.chance(0.1)
          ? invalidFrame(random, fixtures, allTypes)
          : oddValidFrame(random, fixtures, jobIds);
        ws.send(frame);
        sent += 1;
      }
      await drained(ws);
    }
    ws.close();
  }

  const fuzzing = Promise.all(Array.from({ length: CONNECTIONS }, (_, i) => fuzzConnection(i)));

  // Meanwhile the good host gets a job dispatched and answers it, as an agent does.
  await eventually(
    () => sent,
    (n) => n > TOTAL_FRAMES / 4,
    { timeoutMs: TIME_LIMIT_MS, what: "a quarter of the fuzz sent" },
  );
  const jobId = mintJobId(server.deps);
  const dispatched = await startJob(server.deps, {
    id: jobId,
    kind: "check",
    hostId: good.host.id,
    actor: { kind: "user" },
    command: (id) => ({ job_id: id, kind: "check", requires_admin_creds: false, check: {} }),
    offline: "refuse",
  });
  if (!dispatched.ok) {
    throw new Error(`dispatch to the good host failed: ${dispatched.reason}`);
  }
  const command = await goodAgent.waitFor(
    (frame) =>
      frame.type === "command.run" && (frame.payload as { job_id: string }).job_id === dispatched.job.id,
    30_000,
  );
  expect(command.type).toBe("command.run");
  const at = server.deps.clock.now().toISOString();
  goodAgent.send("job.started", { job_id: dispatched.job.id, kind: "check", started_at: at });
  goodAgent.send("heartbeat", { running_job_ids: [dispatched.job.id] });
  goodAgent.send("job.finished", { job_id: dispatched.job.id, status: "succeeded", exit_code: 0 });

  await fuzzing;
  const seconds = (Date.now() - started) / 1000;
  await server.channel.idle();
  await eventually(
    async () => (await readJob(server.deps, dispatched.job.id))?.status,
    (status) => status === "succeeded",
    { what: "the good host's job answered" },
  );
  expect(server.deps.hub.isOnline(good.host.id)).toBe(true);
  expect((await readHost(server.deps, good.host.id))?.status).toBe("online");
  expect(goodAgent.ws.readyState).toBe(WebSocket.OPEN);

  forceGc();
  const grown = process.memoryUsage().heapUsed - heapBefore;
  console.info(
    `ws fuzz: ${sent} frames over ${connections} connections in ${seconds.toFixed(1)} s (seed ${SEED}); ` +
      `closes ${JSON.stringify(Object.fromEntries(closeCodes))}; heap ${(grown / 2 ** 20).toFixed(1)} MiB`,
  );
  expect(sent).toBe(TOTAL_FRAMES);
  expect(grown).toBeLessThan(HEAP_GROWTH_LIMIT);
  // pino level 50 and above: a handler that failed on a frame, or a frame loop that threw.
  const failures = server.deps.logLines.filter((line) => /"level":(50|60)/.test(line));
  expect(failures.slice(0, 5)).toEqual([]);
  // No host's token hash ever reaches the log.
  const log = server.deps.logLines.join("\n");
  for (const host of fuzzHosts) {
    expect(log).not.toContain(hashToken(host.token));
  }
  await goodAgent.close();
}, 600_000);
