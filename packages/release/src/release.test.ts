import { execFileSync, spawnSync } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ReleaseManifest, SEA_SENTINEL_FUSE, sha256File } from "./index.js";
import { buildRelease } from "./release.js";

// One release for the whole file: the SEA is a copy of the ~100 MB node binary.
const VERSION = "9.8.7-release-test";
const exe = process.platform === "win32" ? ".exe" : "";
const seaFile = `fleetback-agent-${VERSION}-${process.platform}-${process.arch}${exe}`;

let dir: string;
let manifest: ReleaseManifest;
let onDisk: ReleaseManifest;
const lines: string[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "fleetback-release-"));
  ({ manifest } = await buildRelease({ outDir: dir, version: VERSION, log: (line) => lines.push(line) }));
  onDisk = JSON.parse(await readFile(join(dir, "manifest.json"), "utf8"));
  // About 7 s alone; more while turbo runs every package's tests on two cores.
}, 180_000);
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("buildRelease", () => {
  it("writes the bundle, this platform's SEA and the manifest, and nothing else", async () => {
    expect(onDisk).toEqual(manifest);
    expect(onDisk).toEqual({
      version: VERSION,
      artefacts: [
        {
          kind: "bundle",
          file: `fleetback-agent-${VERSION}.mjs`,
          sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
        },
        {
          kind: "sea",
          os: process.platform,
          arch: process.arch,
          file: seaFile,
          sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
        },
      ],
    });
    expect((await readdir(dir)).sort()).toEqual(
      [`fleetback-agent-${VERSION}.mjs`, seaFile, "manifest.json"].sort(),
    );
  });

  it("records the SHA-256 of each file", async () => {
    for (const artefact of onDisk.artefacts) {
      expect(await sha256File(join(dir, artefact.file)), artefact.file).toBe(artefact.sha256);
    }
  });

  it("builds the bundle for the release version (banner first, run by node)", async () => {
    const bundle = join(dir, `fleetback-agent-${VERSION}.mjs`);
    expect((await readFile(bundle, "utf8")).split("\n", 1)[0]).toBe(`// fleetback-agent ${VERSION}`);
    expect(execFileSync(process.execPath, [bundle, "--version"], { encoding: "utf8" })).toBe(`${VERSION}\n`);
  });

  it("makes an executable SEA that runs the agent CLI by itself", async () => {
    const sea = join(dir, seaFile);
    expect((await stat(sea)).mode & 0o777).toBe(0o755);
    const version = spawnSync(sea, ["--version"], { encoding: "utf8", env: { PATH: "/nonexistent" } });
    expect(version.stderr).toBe("");
    expect(version.stdout).toBe(`${VERSION}\n`);
    const help = spawnSync(sea, ["help"], { encoding: "utf8" });
    expect(help.stdout).toMatch(/^Usage: fleetback-agent <command>/);
    const usage = spawnSync(sea, ["no-such-command"], { encoding: "utf8" });
    expect(usage.status).toBe(2);
    expect(usage.stderr).toBe(
      'fleetback-agent: unknown command "no-such-command" (see fleetback-agent --help)\n',
    );
  });

  it("injects the blob and flips the SEA fuse", async () => {
    const binary = await readFile(join(dir, seaFile));
    expect(binary.includes(`${SEA_SENTINEL_FUSE}:1`)).toBe(true);
    expect(binary.includes(`${SEA_SENTINEL_FUSE}:0`)).toBe(false);
  });

  it("is a SEA to the agent: node:sea's isSea(), as the agent asks it, is true inside", async () => {
    // A preload runs in the executable's own process; the agent reads agent_kind the same way.
    const probe = join(dir, "probe.cjs");
    await writeFile(probe, 'console.log("isSea", process.getBuiltinModule("node:sea").isSea());\n');
    try {
      const run = spawnSync(join(dir, seaFile), ["--version"], {
        encoding: "utf8",
        env: { NODE_OPTIONS: `--require ${probe}` },
      });
      expect(run.stdout).toBe(`isSea true\n${VERSION}\n`);
      const plain = spawnSync(process.execPath, ["--require", probe, "-e", ""], { encoding: "utf8" });
      expect(plain.stdout).toBe("isSea false\n");
    } finally {
      await rm(probe);
    }
  });

  it("logs each artefact", () => {
    expect(lines.map((line) => line.split(" ")[0])).toEqual(["bundle", "sea", "manifest"]);
  });
});

describe("buildRelease without the SEA", () => {
  it("writes the bundle and a manifest naming only it", async () => {
    const out = await mkdtemp(join(tmpdir(), "fleetback-release-bundle-"));
    try {
      const { manifest: bundleOnly } = await buildRelease({ outDir: out, version: VERSION, sea: false });
      expect(bundleOnly.artefacts.map((a) => a.kind)).toEqual(["bundle"]);
      expect(bundleOnly.artefacts[0]?.sha256).toBe(manifest.artefacts[0]?.sha256);
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  });

  it("refuses a version that is not a plain version", async () => {
    await expect(
      buildRelease({ outDir: join(tmpdir(), "never"), version: "../1", sea: false }),
    ).rejects.toThrow(RangeError);
  });
});
