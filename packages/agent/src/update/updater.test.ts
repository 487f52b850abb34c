import { mkdtemp, readdir } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CommandUpdate, UpdateResult } from "@fleetback/protocol";
import { createManualTimers } from "@fleetback/protocol/manual-timers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { portOf } from "../testing/http-stub.js";
import { createMemoryLogger } from "../testing/memory-logger.js";
import { waitUntil } from "../testing/processes.js";
import { createReleaseSigner, sha256Hex } from "../testing/release-signing.js";
import { downloadArtefact } from "./download.js";
import { nodeFileOps } from "./file-ops.js";
import { createPosixPlatform } from "./posix-platform.js";
import { createUpdater, FAILED_RETRY_AFTER_MS } from "./updater.js";

const signer = createReleaseSigner();
const stranger = createReleaseSigner();
const bundle = Buffer.from("// fleetback-agent 0.2.0\nconsole.log('new');\n");
let server: Server;
let base = "";
const requests: IncomingMessage[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    requests.push(request);
    if (request.url === "/install/agent/0.2.0") {
      response.writeHead(200, { "content-length": bundle.length }).end(bundle);
    } else if (request.url === "/install/agent/huge") {
      // Announces more than the cap; the agent must not even start writing.
      response.writeHead(200, { "content-length": 300 * 1024 * 1024 });
      response.write("x");
    } else {
      response.writeHead(404, { "content-type": "application/json" }).end('{"code":"not_found"}');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${portOf(server)}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** A `url` starting with `/` is on the test server (whose port the it.each table cannot know yet). */
function command(overrides: Partial<CommandUpdate> = {}): CommandUpdate {
  const url = overrides.url ?? "/install/agent/0.2.0";
  return {
    version: "0.2.0",
    sha256: sha256Hex(bundle),
    signature: signer.sign(bundle),
    ...overrides,
    url: url.startsWith("/") ? `${base}${url}` : url,
  };
}

async function setUp(options: { jobsIdle?: () => Promise<void> } = {}) {
  const dir = join(await mkdtemp(join(tmpdir(), "fleetback-updater-")), "update");
  const platform = createPosixPlatform({ dir, fs: nodeFileOps });
  const sent: UpdateResult[] = [];
  const restarts: string[] = [];
  const timers = createManualTimers(new Date("2026-03-01T10:00:00Z"));
  const updater = createUpdater({
    selfVersion: "0.1.0",
    selfKind: "bundle",
    serverUrl: base,
    token: "fa_secret-token",
    platform,
    fs: nodeFileOps,
    download: downloadArtefact,
    releaseKey: async () => ({ ok: true, key: signer.publicKey, base64: signer.publicKeyBase64 }),
    send: (result) => sent.push(result) > 0,
    jobsIdle: options.jobsIdle ?? (async () => {}),
    restart: (version) => restarts.push(version),
    clock: timers.clock,
    timers,
    log: createMemoryLogger(),
  });
  await platform.writeRecord({ format: 1 });
  const files = async () => (await readdir(dir)).sort();
  const record = async () => {
    const read = await platform.readRecord();
    return read.ok ? read.record : undefined;
  };
  return { dir, platform, updater, sent, restarts, timers, files, record };
}

describe("updater", () => {
  it("downloads with the bearer, verifies, stages, activates a trial and restarts", async () => {
    const { updater, sent, restarts, files, record } = await setUp();
    requests.length = 0;
    await updater.handle(command());
    expect(requests[0]?.headers.authorization).toBe("Bearer fa_secret-token");
    expect(sent).toEqual([{ version: "0.2.0", status: "restarting" }]);
    expect(restarts).toEqual(["0.2.0"]);
    expect(await files()).toEqual(["agent-0.2.0.mjs", "boot.json"]);
    expect((await record())?.trial).toEqual({
      version: "0.2.0",
      file: "agent-0.2.0.mjs",
      sha256: sha256Hex(bundle),
      kind: "bundle",
      // Kept for the launcher, which verifies it again on every start.
      signature: signer.sign(bundle),
      staged_at: "2026-03-01T10:00:00.000Z",
    });
    // On its way out: a second offer is not started.
    await updater.handle(command({ version: "0.2.1" }));
    expect(sent).toHaveLength(1);
  });

  it.each<[string, Partial<CommandUpdate>, RegExp]>([
    [
      "a wrong SHA-256",
      { sha256: "ab".repeat(32) },
      /^SHA-256 mismatch: the download has [0-9a-f]{64}, the server announced (ab)+$/,
    ],
    [
      "a bad signature",
      { signature: signer.sign(Buffer.from("other bytes")) },
      /does not verify against the pinned release key/,
    ],
    [
      "a signature by another key",
      { signature: stranger.sign(bundle) },
      /does not verify against the pinned release key/,
    ],
    [
      "an artefact above the cap",
      { url: "/install/agent/huge" },
      /is 314572800 bytes, more than the 268435456 allowed/,
    ],
    ["an HTTP error", { url: "/install/agent/9.9.9" }, /^the server answered the download with HTTP 404$/],
    ["a URL on another server", { url: "http://elsewhere.example/a" }, /not on this agent's server/],
    ["a version that is no file name", { version: "../x" }, /is not a version this agent can store/],
  ])("refuses %s, cleans up and keeps running", async (_name, overrides, error) => {
    const { updater, sent, restarts, files, record } = await setUp();
    await updater.handle(command(overrides));
    expect(sent).toEqual([
      { version: overrides.version ?? "0.2.0", status: "refused", error: expect.stringMatching(error) },
    ]);
    expect(sent[0]?.error).not.toContain("fa_secret-token");
    expect(restarts).toEqual([]);
    expect(await files()).toEqual(["boot.json"]);
    expect(await record()).toEqual({ format: 1 });
    // Not stuck: the next offer is handled.
    await updater.handle(command());
    expect(sent[1]?.status).toBe("restarting");
  });

  it("ignores its own version", async () => {
    const { updater, sent } = await setUp();
    await updater.handle(command({ version: "0.1.0" }));
    expect(sent).toEqual([]);
  });

  it("answers rolled_back for bytes that rolled back within the hour, and retries them later", async () => {
    const { updater, platform, sent, timers } = await setUp();
    const reason = "version 0.2.0 did not connect to the server within 120 s";
    await platform.writeRecord({
      format: 1,
      failed: {
        version: "0.2.0",
        sha256: sha256Hex(bundle),
        reason,
        at: timers.clock.now().toISOString(),
        reported: true,
      },
    });
    await updater.handle(command());
    expect(sent).toEqual([{ version: "0.2.0", status: "rolled_back", error: reason }]);
    timers.advance(FAILED_RETRY_AFTER_MS);
    await updater.handle(command());
    expect(sent[1]?.status).toBe("restarting");
  });

  it("waits for running jobs before it restarts, and refuses when they outlast the wait", async () => {
    let finishJobs = () => {};
    const jobs = new Promise<void>((resolve) => (finishJobs = resolve));
    let asked = 0;
    const waiting = await setUp({
      jobsIdle: () => {
        asked += 1;
        return jobs;
      },
    });
    const handled = waiting.updater.handle(command());
    // Once it asks whether the jobs are idle it can only go on when they are or the wait is over.
    await waitUntil(() => asked === 1);
    expect(waiting.timers.pendingDelays()).toEqual([30 * 60 * 1000]);
    expect(waiting.sent).toEqual([]);
    finishJobs();
    await handled;
    expect(waiting.sent).toEqual([{ version: "0.2.0", status: "restarting" }]);

    let busyAsked = 0;
    const busy = await setUp({
      jobsIdle: () => {
        busyAsked += 1;
        return new Promise(() => {});
      },
    });
    const refused = busy.updater.handle(command());
    await waitUntil(() => busyAsked === 1);
    // 30 minutes, written out: not given up a millisecond before.
    busy.timers.advance(30 * 60 * 1000 - 1);
    expect(busy.timers.pendingDelays()).toEqual([1]);
    busy.timers.advance(1);
    await refused;
    expect(busy.sent).toEqual([
      {
        version: "0.2.0",
        status: "refused",
        error: expect.stringMatching(/jobs were still running after 30 min/),
      },
    ]);
    expect(await busy.files()).toEqual(["boot.json"]);
  });

  it("commits its own trial once accepted and reports a rollback once", async () => {
    const { updater, platform, sent, record } = await setUp();
    const trial = {
      version: "0.1.0",
      file: "agent-0.1.0.mjs",
      sha256: "11".repeat(32),
      kind: "bundle" as const,
    };
    const failed = {
      version: "0.0.9",
      sha256: "99".repeat(32),
      reason: "it crashed",
      at: "t",
      reported: false,
    };
    await platform.writeRecord({ format: 1, trial: { ...trial, staged_at: "s", started_at: "t" }, failed });
    await updater.onAccepted();
    await updater.onAccepted();
    expect(await record()).toEqual({ format: 1, active: trial, failed: { ...failed, reported: true } });
    expect(sent).toEqual([{ version: "0.0.9", status: "rolled_back", error: "it crashed" }]);
  });
});
