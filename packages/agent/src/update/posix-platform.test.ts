import { mkdtemp, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../testing/release-signing.js";
import type { ArtefactRef } from "./boot-record.js";
import { nodeFileOps } from "./file-ops.js";
import { createPosixPlatform } from "./posix-platform.js";

async function platformInTempDir() {
  const dir = join(await mkdtemp(join(tmpdir(), "fleetback-update-")), "update");
  const platform = createPosixPlatform({ dir, fs: nodeFileOps });
  // The first record write creates the private dir, as the updater's first download does.
  await platform.writeRecord({ format: 1 });
  return { dir, platform };
}

async function download(dir: string, name: string, content: string) {
  const path = join(dir, name);
  await writeFile(path, content, { mode: 0o600 });
  return path;
}

describe("posix platform", () => {
  it("stages a single executable as 0755 under its versioned name", async () => {
    const { dir, platform } = await platformInTempDir();
    const temp = await download(dir, ".download-1", "#!/bin/sh\n");
    const ref: ArtefactRef = {
      version: "0.2.0",
      file: platform.artefactFile("0.2.0", "sea"),
      sha256: sha256Hex("#!/bin/sh\n"),
      kind: "sea",
    };
    await platform.stage(temp, ref);
    expect(ref.file).toBe("agent-0.2.0");
    expect((await stat(join(dir, "agent-0.2.0"))).mode & 0o777).toBe(0o755);
    expect(platform.artefactFile("0.2.0", "bundle")).toBe("agent-0.2.0.mjs");
  });

  it("activates by renaming the record at once and drops files no record names", async () => {
    const { dir, platform } = await platformInTempDir();
    await download(dir, "agent-0.0.9.mjs", "old");
    const active: ArtefactRef = {
      version: "0.1.1",
      file: "agent-0.1.1.mjs",
      sha256: sha256Hex("a"),
      kind: "bundle",
    };
    await download(dir, active.file, "a");
    const temp = await download(dir, ".download-2", "b");
    const ref: ArtefactRef = {
      version: "0.2.0",
      file: "agent-0.2.0.mjs",
      sha256: sha256Hex("b"),
      kind: "bundle",
    };
    await platform.stage(temp, ref);
    await platform.activate({ format: 1, active, trial: { ...ref, staged_at: "2026-03-01T10:00:00.000Z" } });
    const record = JSON.parse(await readFile(join(dir, "boot.json"), "utf8"));
    expect(record.trial).toMatchObject({ version: "0.2.0", file: "agent-0.2.0.mjs" });
    expect((await readdir(dir)).sort()).toEqual(["agent-0.1.1.mjs", "agent-0.2.0.mjs", "boot.json"]);
    expect((await stat(join(dir, "boot.json"))).mode & 0o777).toBe(0o600);
  });

  it("sweeps abandoned downloads at start, but nothing under a record it cannot read", async () => {
    const { dir, platform } = await platformInTempDir();
    await download(dir, ".download-3", "partial");
    await download(dir, "agent-0.3.0.mjs", "named by a newer record");
    expect(await platform.prepareStart()).toEqual([]);
    expect(await readdir(dir)).toEqual(["boot.json"]);

    await download(dir, "agent-0.3.0.mjs", "named by a newer record");
    await writeFile(join(dir, "boot.json"), JSON.stringify({ format: 2, next: "agent-0.3.0.mjs" }));
    expect((await platform.prepareStart())[0]).toMatch(/not a boot record this version understands/);
    expect((await readdir(dir)).sort()).toEqual(["agent-0.3.0.mjs", "boot.json"]);
  });
});
