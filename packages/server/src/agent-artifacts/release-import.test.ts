import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateSigningKeyPair, verifySignature } from "@fleetback/crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createManualClock } from "../clock.js";
import { createLogger } from "../log.js";
import { openAgentStore } from "../server.js";
import { bannerVersion } from "./agent-bundle.js";
import { createBundleStore } from "./bundle-store.js";
import { importRelease, ReleaseImportError } from "./release-import.js";
import { sha256Hex } from "./signed-file.js";

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "fleetback-release-import-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const encoder = new TextEncoder();
const bundleOf = (version: string, text = "console.log('agent');") =>
  encoder.encode(`// fleetback-agent ${version}\n${text}\n`);
const SEA_LINUX = new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 1]);
const SEA_WINDOWS = new Uint8Array([0x4d, 0x5a, 2]);

interface ReleaseFile {
  entry: Record<string, string>;
  body: Uint8Array;
}

async function writeRelease(version: string, files: ReleaseFile[], manifest?: unknown): Promise<string> {
  const dir = await mkdtemp(join(root, "release-"));
  for (const file of files) {
    await writeFile(join(dir, file.entry.file ?? "missing"), file.body);
  }
  const artefacts = files.map((file) => ({ sha256: sha256Hex(file.body), ...file.entry }));
  await writeFile(join(dir, "manifest.json"), JSON.stringify(manifest ?? { version, artefacts }));
  return dir;
}

function standardRelease(version: string, bundle = bundleOf(version)): ReleaseFile[] {
  return [
    { entry: { kind: "bundle", file: `fleetback-agent-${version}.mjs` }, body: bundle },
    {
      entry: { kind: "sea", os: "linux", arch: "x64", file: `fleetback-agent-${version}-linux-x64` },
      body: SEA_LINUX,
    },
    {
      entry: { kind: "sea", os: "win32", arch: "x64", file: `fleetback-agent-${version}-win32-x64.exe` },
      body: SEA_WINDOWS,
    },
  ];
}

async function freshStore() {
  const dir = join(await mkdtemp(join(root, "store-")), "agent-bundles");
  const releaseKey = generateSigningKeyPair();
  const clock = createManualClock(new Date("2026-11-21T12:00:00Z"));
  return { store: createBundleStore({ dir, releaseKey, clock }), releaseKey, dir };
}

describe("bannerVersion", () => {
  it("reads the first line's version, and nothing from a bundle without the banner", () => {
    expect(bannerVersion(bundleOf("1.2.3-rc.1"))).toBe("1.2.3-rc.1");
    expect(bannerVersion(encoder.encode("// fleetback-agent 1.0.0\r\nx"))).toBe("1.0.0");
    expect(bannerVersion(encoder.encode("#!/usr/bin/env node\n// fleetback-agent 1.0.0\n"))).toBeUndefined();
    expect(bannerVersion(encoder.encode("// fleetback-agent \n"))).toBeUndefined();
  });
});

describe("importRelease", () => {
  it("stores the bundle and every SEA signed, and a second import writes nothing", async () => {
    const { store, releaseKey, dir } = await freshStore();
    const release = await writeRelease("1.4.0", standardRelease("1.4.0"));
    const first = await importRelease(store, release);
    expect(first.map((entry) => [entry.artefact, entry.added])).toEqual([
      ["bundle", true],
      ["linux-x64", true],
      ["win32-x64", true],
    ]);
    const sea = await store.readSea("1.4.0", "win32", "x64");
    expect(sea.ok && Buffer.from(sea.body)).toEqual(Buffer.from(SEA_WINDOWS));
    expect(
      sea.ok && verifySignature(releaseKey.publicKey, sea.body, Buffer.from(sea.info.signature, "base64")),
    ).toBe(true);
    expect((await store.listSea("1.4.0")).map((info) => `${info.os}-${info.arch}`)).toEqual([
      "linux-x64",
      "win32-x64",
    ]);
    const again = await importRelease(store, release);
    expect(again.map((entry) => entry.added)).toEqual([false, false, false]);
    expect((await readdir(join(dir, "1.4.0"))).sort()).toEqual([
      "bundle.json",
      "fleetback-agent.mjs",
      "sea-linux-x64",
      "sea-win32-x64",
    ]);
  });

  it("refuses a bundle whose banner names another version, storing nothing", async () => {
    const { store } = await freshStore();
    const release = await writeRelease("1.5.0", standardRelease("1.5.0", bundleOf("1.4.9")));
    await expect(importRelease(store, release)).rejects.toThrow(
      /banner says version 1\.4\.9, the manifest says 1\.5\.0/,
    );
    expect(await store.list()).toEqual([]);
    const bare = await writeRelease("1.5.0", standardRelease("1.5.0", encoder.encode("console.log(1);\n")));
    await expect(importRelease(store, bare)).rejects.toThrow(/banner says nothing/);
  });

  it("refuses a file whose SHA-256 differs from the manifest, storing nothing", async () => {
    const { store } = await freshStore();
    const files = standardRelease("1.6.0");
    const release = await writeRelease("1.6.0", files);
    await writeFile(join(release, "fleetback-agent-1.6.0-linux-x64"), "truncated");
    const error = await importRelease(store, release).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReleaseImportError);
    expect(String(error)).toContain("fleetback-agent-1.6.0-linux-x64 has SHA-256");
    expect(await store.list()).toEqual([]);
  });

  it("refuses a malformed manifest, naming the field, and a file outside the directory", async () => {
    const { store } = await freshStore();
    const bad = await writeRelease("1.7.0", [], {
      version: "1.7.0",
      artefacts: [{ kind: "sea", file: "x" }],
    });
    await expect(importRelease(store, bad)).rejects.toThrow(/manifest\.json: artefacts/);
    const escaping = await writeRelease("1.7.0", [
      { entry: { kind: "bundle", file: "../fleetback-agent.mjs" }, body: bundleOf("1.7.0") },
    ]);
    await expect(importRelease(store, escaping)).rejects.toThrow(/must be a plain name/);
    await expect(importRelease(store, join(root, "no-such-dir"))).rejects.toThrow(ReleaseImportError);
  });

  it("refuses to rewrite a stored version with other bytes", async () => {
    const { store } = await freshStore();
    await importRelease(store, await writeRelease("1.8.0", standardRelease("1.8.0")));
    const other = await writeRelease(
      "1.8.0",
      standardRelease("1.8.0", bundleOf("1.8.0", "console.log('other');")),
    );
    await expect(importRelease(store, other)).rejects.toThrow(
      /already stored with SHA-256 .* never rewritten/,
    );
  });

  it("imports FLEETBACK_RELEASE_DIR when the agent store is opened at start", async () => {
    const dataDir = await mkdtemp(join(root, "data-"));
    const releaseDir = await writeRelease("1.9.0", standardRelease("1.9.0"));
    const lines: string[] = [];
    const log = createLogger("info", { write: (line: string) => lines.push(line) });
    const clock = createManualClock(new Date("2026-11-21T12:00:00Z"));
    const { agentBundles } = await openAgentStore({ dataDir, releaseDir }, { log, clock });
    expect((await agentBundles.list()).map((info) => info.version)).toContain("1.9.0");
    expect(await agentBundles.seaInfo("1.9.0", "linux", "x64")).toMatchObject({
      sha256: sha256Hex(SEA_LINUX),
    });
    expect(lines.filter((line) => line.includes("agent release artefact imported"))).toHaveLength(3);
    const broken = await writeRelease("2.0.0", standardRelease("2.0.0", bundleOf("1.0.0")));
    await expect(openAgentStore({ dataDir, releaseDir: broken }, { log, clock })).rejects.toThrow(
      /cannot import the release in .* \(FLEETBACK_RELEASE_DIR\): .*banner/,
    );
  });
});

describe("SEA store", () => {
  it("needs the version's bundle first and refuses malformed platforms", async () => {
    const { store } = await freshStore();
    await expect(store.addSea("3.0.0", "linux", "x64", SEA_LINUX)).rejects.toThrow(
      /store the bundle of 3\.0\.0 first/,
    );
    await store.add("3.0.0", bundleOf("3.0.0"));
    await expect(store.addSea("3.0.0", "Linux", "x64", SEA_LINUX)).rejects.toThrow(RangeError);
    await expect(store.addSea("3.0.0", "linux", "x64", SEA_LINUX, "0".repeat(64))).rejects.toThrow(
      /expected 0000/,
    );
    expect((await store.addSea("3.0.0", "linux", "x64", SEA_LINUX)).added).toBe(true);
    expect(await store.readSea("3.0.0", "linux", "../x")).toEqual({ ok: false, reason: "not_found" });
    expect(await store.seaInfo("3.0.0", "darwin", "arm64")).toBeUndefined();
  });
});
