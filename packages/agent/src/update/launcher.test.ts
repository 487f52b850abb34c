import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AgentKind } from "@fleetback/protocol";
import { UPDATE_TRIAL_MS } from "@fleetback/protocol";
import { createManualTimers } from "@fleetback/protocol/manual-timers";
import { describe, expect, it } from "vitest";
import { createMemoryLogger } from "../testing/memory-logger.js";
import { waitUntil } from "../testing/processes.js";
import { createReleaseSigner, sha256Hex } from "../testing/release-signing.js";
import type { ArtefactRef, BootRecord } from "./boot-record.js";
import { nodeFileOps } from "./file-ops.js";
import type { LaunchPorts } from "./launch-ports.js";
import { LAUNCHED_ENV, launch, TRIAL_EXPIRED_EXIT } from "./launcher.js";
import { createPosixPlatform } from "./posix-platform.js";

const signer = createReleaseSigner();

async function setUp(
  record: BootRecord | undefined,
  selfKind: AgentKind = "bundle",
  releaseKey: Uint8Array | null = signer.publicKey,
) {
  const dir = join(await mkdtemp(join(tmpdir(), "fleetback-launch-")), "update");
  const platform = createPosixPlatform({ dir, fs: nodeFileOps });
  await platform.writeRecord(record ?? { format: 1 });
  const ref: ArtefactRef = {
    version: "0.2.0",
    file: "agent-0.2.0.mjs",
    sha256: sha256Hex("two"),
    kind: "bundle",
    signature: signer.sign(Buffer.from("two")),
  };
  await writeFile(join(dir, ref.file), "two");
  const timers = createManualTimers();
  const env: NodeJS.ProcessEnv = {};
  const imported: string[] = [];
  let finish: (code: number) => void = () => {};
  const terminations: number[] = [];
  const ports: LaunchPorts = {
    importBundle(path) {
      imported.push(path);
      return {
        exited: new Promise((resolve) => (finish = resolve)),
        terminate: (code) => terminations.push(code),
      };
    },
    spawnExecutable: () => {
      throw new Error("no executables here");
    },
  };
  const log = createMemoryLogger();
  const start = (trialMs?: number) =>
    launch({
      selfVersion: "0.1.0",
      selfKind,
      args: ["run"],
      env,
      platform,
      fs: nodeFileOps,
      clock: timers.clock,
      timers,
      log,
      ports,
      releaseKey: releaseKey ?? undefined,
      trialMs,
    });
  const readRecord = async () => {
    const read = await platform.readRecord();
    return read.ok ? read.record : undefined;
  };
  return {
    dir,
    ref,
    writeRecord: (written: BootRecord) => platform.writeRecord(written),
    env,
    imported,
    timers,
    start,
    finish: (code: number) => finish(code),
    terminations,
    readRecord,
    log,
  };
}

describe("launcher", () => {
  it("runs itself when the record names nothing else", async () => {
    const { start, imported } = await setUp(undefined);
    expect(await start()).toEqual({ kind: "self" });
    expect(imported).toEqual([]);
  });

  it("imports the active bundle with FLEETBACK_AGENT_LAUNCHED set and passes its exit status on", async () => {
    const setup = await setUp(undefined);
    await setup.writeRecord({ format: 1, active: setup.ref });
    const outcome = setup.start();
    await waitUntil(() => setup.imported.length === 1);
    expect(setup.imported).toEqual([join(setup.dir, "agent-0.2.0.mjs")]);
    expect(setup.env[LAUNCHED_ENV]).toBe("0.2.0");
    setup.finish(5);
    expect(await outcome).toEqual({ kind: "launched", version: "0.2.0", exitCode: 5 });
  });

  it("runs itself when the active file was altered", async () => {
    const setup = await setUp(undefined);
    await setup.writeRecord({ format: 1, active: { ...setup.ref, sha256: sha256Hex("other") } });
    expect(await setup.start()).toEqual({ kind: "self" });
  });

  it("runs itself when the signature does not match, even though the recorded SHA-256 does", async () => {
    // Whoever writes the state dir can write a bundle and its hash, but cannot sign it.
    const forger = createReleaseSigner();
    for (const signature of [
      forger.sign(Buffer.from("two")),
      signer.sign(Buffer.from("one")),
      "bm90IGEgc2ln",
    ]) {
      const setup = await setUp(undefined);
      await setup.writeRecord({ format: 1, active: { ...setup.ref, signature } });
      expect(await setup.start(), signature).toEqual({ kind: "self" });
      expect(setup.imported).toEqual([]);
      expect(JSON.stringify(setup.log.entries), signature).toMatch(/signature/);
    }
  });

  it("runs itself for an older record without a signature, or without a pinned key", async () => {
    const { signature: _none, ...unsigned } = (await setUp(undefined)).ref;
    const older = await setUp(undefined);
    await older.writeRecord({ format: 1, active: unsigned });
    expect(await older.start()).toEqual({ kind: "self" });
    expect(JSON.stringify(older.log.entries)).toMatch(/keeps no release signature/);
    const keyless = await setUp(undefined, "bundle", null);
    await keyless.writeRecord({ format: 1, active: keyless.ref });
    expect(await keyless.start()).toEqual({ kind: "self" });
    expect(keyless.imported).toEqual([]);
  });

  it("rolls back a trial whose signature does not verify, without starting it", async () => {
    const setup = await setUp(undefined);
    await setup.writeRecord({
      format: 1,
      trial: { ...setup.ref, signature: createReleaseSigner().sign(Buffer.from("two")), staged_at: "s" },
    });
    expect(await setup.start()).toEqual({ kind: "self" });
    expect(setup.imported).toEqual([]);
    expect(await setup.readRecord()).toMatchObject({
      failed: { version: "0.2.0", reason: expect.stringMatching(/signature/) },
    });
  });

  it("never imports a bundle into a single executable", async () => {
    const setup = await setUp(undefined, "sea");
    await setup.writeRecord({ format: 1, active: setup.ref });
    expect(await setup.start()).toEqual({ kind: "self" });
  });

  it("ends a trial that misses its deadline with 75, rolled back", async () => {
    const setup = await setUp(undefined);
    await setup.writeRecord({ format: 1, trial: { ...setup.ref, staged_at: "s" } });
    const outcome = setup.start();
    await waitUntil(() => setup.imported.length === 1);
    expect((await setup.readRecord())?.trial?.started_at).toBe("2026-01-01T00:00:00.000Z");
    setup.timers.advance(UPDATE_TRIAL_MS);
    await waitUntil(() => setup.terminations.length === 1);
    expect(setup.terminations).toEqual([TRIAL_EXPIRED_EXIT]);
    setup.finish(0);
    expect(await outcome).toEqual({ kind: "launched", version: "0.2.0", exitCode: 75 });
    expect(await setup.readRecord()).toMatchObject({ failed: { version: "0.2.0", reported: false } });
    // The next start runs the installed version again.
    expect(await setup.start()).toEqual({ kind: "self" });
  });

  it("ends a trial at the period it was given instead of UPDATE_TRIAL_MS", async () => {
    const setup = await setUp(undefined);
    await setup.writeRecord({ format: 1, trial: { ...setup.ref, staged_at: "s" } });
    const outcome = setup.start(5_000);
    await waitUntil(() => setup.imported.length === 1);
    setup.timers.advance(4_999);
    expect(setup.timers.pendingDelays()).toEqual([1]);
    setup.timers.advance(1);
    await waitUntil(() => setup.terminations.length === 1);
    setup.finish(0);
    expect(await outcome).toEqual({ kind: "launched", version: "0.2.0", exitCode: TRIAL_EXPIRED_EXIT });
    expect(await setup.readRecord()).toMatchObject({
      failed: { version: "0.2.0", reason: "version 0.2.0 did not connect to the server within 5 s" },
    });
  });

  it("keeps an imported trial's watchdog armed after the bundle's evaluation ended", async () => {
    // A bundle whose top level returns while its timers and sockets keep running (and never
    // connect) must still be rolled back at the deadline.
    const setup = await setUp(undefined);
    await setup.writeRecord({ format: 1, trial: { ...setup.ref, staged_at: "s" } });
    const outcome = setup.start();
    await waitUntil(() => setup.imported.length === 1);
    setup.finish(0);
    expect(await outcome).toEqual({ kind: "launched", version: "0.2.0", exitCode: 0 });
    setup.timers.advance(UPDATE_TRIAL_MS);
    await waitUntil(() => setup.terminations.length === 1);
    expect(setup.terminations).toEqual([TRIAL_EXPIRED_EXIT]);
    expect(await setup.readRecord()).toMatchObject({ failed: { version: "0.2.0" } });
  });
});
