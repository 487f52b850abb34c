import { join } from "node:path";
import { createManualTimers } from "@fleetback/protocol/manual-timers";
import { describe, expect, it } from "vitest";
import { createMemoryLogger } from "../testing/memory-logger.js";
import { createReleaseSigner, sha256Hex } from "../testing/release-signing.js";
import { createWindowsFs } from "../testing/windows-fs.js";
import { commitTrial } from "./boot-decision.js";
import type { ArtefactRef, BootRecord } from "./boot-record.js";
import type { ArtefactProcess, LaunchPorts } from "./launch-ports.js";
import { launch } from "./launcher.js";
import { createWindowsPlatform, PENDING_RECORD_FILE } from "./windows-platform.js";

const dir = "C:\\ProgramData\\fleetback-agent\\update".replaceAll("\\", "/");
const at = (name: string) => join(dir, name);

const signer = createReleaseSigner();

function setUp() {
  const fs = createWindowsFs();
  const platform = createWindowsPlatform({ dir, fs });
  const ref = (version: string, content: string): ArtefactRef => ({
    version,
    file: platform.artefactFile(version, "sea"),
    sha256: sha256Hex(content),
    kind: "sea",
    signature: signer.sign(Buffer.from(content)),
  });
  return { fs, platform, ref };
}

/** A launcher start with child processes that hold their file while they run, as on Windows. */
function startLauncher(setup: ReturnType<typeof setUp>, exitWith: () => Promise<number>) {
  const timers = createManualTimers();
  const spawned: string[] = [];
  const ports: LaunchPorts = {
    importBundle: () => {
      throw new Error("a single-executable host never imports a bundle");
    },
    spawnExecutable(path): ArtefactProcess {
      spawned.push(path);
      setup.fs.hold(path);
      const exited = exitWith().finally(() => setup.fs.release(path));
      return { exited, terminate: () => {} };
    },
  };
  const outcome = launch({
    selfVersion: "0.1.0",
    selfKind: "sea",
    args: ["run"],
    env: {},
    platform: setup.platform,
    fs: setup.fs,
    clock: timers.clock,
    timers,
    log: createMemoryLogger(),
    ports,
    releaseKey: signer.publicKey,
  });
  return { outcome, spawned };
}

async function record(setup: ReturnType<typeof setUp>): Promise<BootRecord | undefined> {
  const read = await setup.platform.readRecord();
  return read.ok ? read.record : undefined;
}

describe("windows platform", () => {
  it("stages beside a running version and swaps only at the next start", async () => {
    const setup = setUp();
    const { fs, platform, ref } = setup;
    const v1 = ref("0.1.1", "one");
    fs.put(at(v1.file), "one");
    await platform.writeRecord({ format: 1, active: v1 });
    // 0.1.1 runs (the launcher's child) and receives the update to 0.2.0.
    fs.hold(at(v1.file));
    const v2 = ref("0.2.0", "two");
    fs.put(at(".download-a"), "two");
    await platform.stage(at(".download-a"), v2);
    await platform.activate({ format: 1, active: v1, trial: { ...v2, staged_at: "2026-03-01T10:00:00Z" } });
    expect(v2.file).toBe("agent-0.2.0.exe");
    expect((await record(setup))?.trial).toBeUndefined();
    expect(fs.files.has(at(PENDING_RECORD_FILE))).toBe(true);

    // 0.1.1 exits 75; the service restarts the launcher, which swaps and starts 0.2.0 on trial.
    fs.release(at(v1.file));
    const { outcome, spawned } = startLauncher(setup, async () => 0);
    expect(await outcome).toEqual({ kind: "launched", version: "0.2.0", exitCode: 0 });
    expect(spawned).toEqual([at("agent-0.2.0.exe")]);
    expect(fs.files.has(at(PENDING_RECORD_FILE))).toBe(false);
    expect((await record(setup))?.trial).toMatchObject({ version: "0.2.0", started_at: expect.any(String) });
  });

  it("reuses an identical artefact that is running, and refuses to replace a different one", async () => {
    const { fs, platform, ref } = setUp();
    const v2 = ref("0.2.0", "two");
    fs.put(at(v2.file), "two");
    fs.hold(at(v2.file));
    fs.put(at(".download-b"), "two");
    await platform.stage(at(".download-b"), v2);
    expect(fs.files.has(at(".download-b"))).toBe(false);

    fs.put(at(".download-c"), "other bytes");
    await expect(platform.stage(at(".download-c"), ref("0.2.0", "other bytes"))).rejects.toThrow(
      /cannot stage agent-0\.2\.0\.exe: EBUSY/,
    );
  });

  it("rolls back to the previous file and deletes the failed one only once nothing runs it", async () => {
    const setup = setUp();
    const { fs, platform, ref } = setup;
    const v1 = ref("0.1.1", "one");
    const v2 = ref("0.2.0", "two");
    fs.put(at(v1.file), "one");
    fs.put(at(v2.file), "two");
    await platform.writeRecord({ format: 1, active: v1, trial: { ...v2, staged_at: "x" } });

    // 0.2.0 crashes on start, before the server accepted it: the next start rolls back.
    expect(await startLauncher(setup, async () => 1).outcome).toMatchObject({
      version: "0.2.0",
      exitCode: 1,
    });
    // Something (a crash dump writer, say) still holds the failed file at the next start.
    fs.hold(at(v2.file));
    const second = startLauncher(setup, async () => 0);
    expect(await second.outcome).toEqual({ kind: "launched", version: "0.1.1", exitCode: 0 });
    expect(second.spawned).toEqual([at("agent-0.1.1.exe")]);
    expect(await record(setup)).toMatchObject({
      active: v1,
      failed: { version: "0.2.0", reported: false, reason: expect.stringMatching(/stopped before/) },
    });
    expect(fs.files.has(at(v2.file))).toBe(true);

    fs.release(at(v2.file));
    await startLauncher(setup, async () => 0).outcome;
    expect([...fs.files.keys()].sort()).toEqual([at("agent-0.1.1.exe"), at("boot.json")]);
  });

  it("keeps the committed version on later starts", async () => {
    const setup = setUp();
    const v2 = setup.ref("0.2.0", "two");
    setup.fs.put(at(v2.file), "two");
    const trial: BootRecord = { format: 1, trial: { ...v2, staged_at: "x", started_at: "y" } };
    await setup.platform.writeRecord(commitTrial(trial, "0.2.0") ?? trial);
    expect(await startLauncher(setup, async () => 0).outcome).toMatchObject({ version: "0.2.0" });
    expect((await record(setup))?.failed).toBeUndefined();
  });
});
