import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Harness, startHarness } from "../testing/agent-harness.js";
import { waitUntil } from "../testing/processes.js";
import { createReleaseSigner, sha256Hex } from "../testing/release-signing.js";
import { startTestServer, type TestServer } from "../testing/test-server.js";
import { nodeFileOps } from "./file-ops.js";
import { createPosixPlatform } from "./posix-platform.js";

const signer = createReleaseSigner();
const bundle = Buffer.from("// fleetback-agent 0.2.0\n");
const releaseKey = async () => ({ ok: true as const, key: signer.publicKey, base64: signer.publicKeyBase64 });
let server: TestServer;
let harness: Harness | undefined;

beforeAll(async () => {
  server = await startTestServer();
  server.handleHttp = (request, response) => {
    if (request.url !== "/install/agent/0.2.0") {
      return false;
    }
    response.writeHead(200).end(bundle);
    return true;
  };
});
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});
afterAll(() => server.stop());

const update = (signature = signer.sign(bundle)) => ({
  version: "0.2.0",
  url: `${server.url}/install/agent/0.2.0`,
  sha256: sha256Hex(bundle),
  signature,
});

describe("agent self-update", () => {
  it("answers command.update with restarting and ends run() with the restart outcome", async () => {
    harness = await startHarness(server, { resticCommand: "/nonexistent/restic", update: { releaseKey } });
    expect(harness.peer.received[0]?.payload).toMatchObject({ agent_version: "0.1.0", agent_kind: "bundle" });
    harness.peer.send("command.update", update());
    expect((await harness.peer.next("update.result")).payload).toEqual({
      version: "0.2.0",
      status: "restarting",
    });
    expect(await harness.outcome).toEqual({ kind: "restart_for_update", version: "0.2.0" });
    await harness.peer.closed;
    const read = await createPosixPlatform({
      dir: join(harness.stateDir, "update"),
      fs: nodeFileOps,
    }).readRecord();
    expect(read.ok && read.record?.trial).toMatchObject({ version: "0.2.0", file: "agent-0.2.0.mjs" });
  });

  it("refuses a bad signature and stays connected", async () => {
    harness = await startHarness(server, { resticCommand: "/nonexistent/restic", update: { releaseKey } });
    harness.peer.send("command.update", update(signer.sign(Buffer.from("something else"))));
    expect((await harness.peer.next("update.result")).payload).toEqual({
      version: "0.2.0",
      status: "refused",
      error: "the signature does not verify against the pinned release key",
    });
    harness.peer.send("schedule.set", { version: 7, schedules: [] });
    expect((await harness.peer.next("schedule.ack")).payload).toEqual({ version: 7 });
  });

  it("commits its trial after the server's first message and reports an earlier rollback once", async () => {
    const dir = join(await mkdtemp(join(tmpdir(), "fleetback-state-")), "update");
    const platform = createPosixPlatform({ dir, fs: nodeFileOps });
    const ref = {
      version: "0.2.0",
      file: "agent-0.2.0.mjs",
      sha256: sha256Hex(bundle),
      kind: "bundle" as const,
    };
    const failed = {
      version: "0.1.9",
      sha256: "99".repeat(32),
      reason: "it crashed",
      at: "t",
      reported: false,
    };
    await platform.writeRecord({ format: 1, trial: { ...ref, staged_at: "s", started_at: "t" }, failed });
    harness = await startHarness(server, {
      resticCommand: "/nonexistent/restic",
      agentVersion: "0.2.0",
      update: { releaseKey, platform },
    });
    harness.peer.send("schedule.set", { version: 1, schedules: [] });
    expect((await harness.peer.next("update.result")).payload).toEqual({
      version: "0.1.9",
      status: "rolled_back",
      error: "it crashed",
    });
    await waitUntil(async () => {
      const read = await platform.readRecord();
      return read.ok && read.record?.failed?.reported === true;
    });
    const read = await platform.readRecord();
    expect(read.ok && read.record).toEqual({ format: 1, active: ref, failed: { ...failed, reported: true } });
  });
});
