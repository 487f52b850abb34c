import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateSigningKeyPair, verifySignature } from "@fleetback/crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createManualClock } from "../clock.js";
import { importShippedBundle, loadAgentBundle } from "./agent-bundle.js";
import { BUNDLE_FILE, BUNDLE_META_FILE, createBundleStore } from "./bundle-store.js";
import { sha256Hex } from "./signed-file.js";

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "fleetback-bundle-store-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function freshStore(releaseKey = generateSigningKeyPair()) {
  const dir = join(await mkdtemp(join(root, "case-")), "agent-bundles");
  const clock = createManualClock(new Date("2026-11-21T12:00:00Z"));
  return { store: createBundleStore({ dir, releaseKey, clock }), clock, releaseKey, dir };
}

const body = (text: string) => new TextEncoder().encode(`#!/usr/bin/env node\n${text}\n`);

describe("bundle store", () => {
  it("imports the shipped bundle once; a second start finds it and writes nothing", async () => {
    const { store, dir, clock } = await freshStore();
    const shipped = await loadAgentBundle();
    const first = await importShippedBundle(store);
    expect(first.added).toBe(true);
    expect(first.info).toMatchObject({
      version: shipped.version,
      sha256: shipped.sha256,
      size: shipped.body.length,
    });
    const metaPath = join(dir, shipped.version, BUNDLE_META_FILE);
    const before = await stat(join(dir, shipped.version, BUNDLE_FILE));
    const meta = await readFile(metaPath, "utf8");
    expect(JSON.parse(meta)).toEqual({
      version: shipped.version,
      sha256: shipped.sha256,
      size: shipped.body.length,
      signature: first.info.signature,
      created_at: "2026-11-21T12:00:00.000Z",
    });
    clock.advance(60_000);
    const second = await importShippedBundle(store);
    expect(second).toEqual({ added: false, info: first.info });
    expect(await readFile(metaPath, "utf8")).toBe(meta);
    expect((await stat(join(dir, shipped.version, BUNDLE_FILE))).mtimeMs).toBe(before.mtimeMs);
  });

  it("never rewrites a stored version, even with other bytes", async () => {
    const { store } = await freshStore();
    await store.add("1.0.0", body("one"));
    const again = await store.add("1.0.0", body("other"));
    expect(again.added).toBe(false);
    const read = await store.read("1.0.0");
    expect(read.ok && Buffer.from(read.body).toString()).toContain("one");
  });

  it("signs the bytes with the release key: the signature verifies, and fails for a modified body", async () => {
    const { store, releaseKey } = await freshStore();
    const bytes = body("signed");
    const { info } = await store.add("1.2.0", bytes);
    const signature = Buffer.from(info.signature, "base64");
    expect(verifySignature(releaseKey.publicKey, bytes, signature)).toBe(true);
    expect(verifySignature(releaseKey.publicKey, body("signed!"), signature)).toBe(false);
    expect(verifySignature(generateSigningKeyPair().publicKey, bytes, signature)).toBe(false);
  });

  it("refuses a body whose SHA-256 is not the expected one, and stores nothing", async () => {
    const { store } = await freshStore();
    await expect(store.add("1.3.0", body("x"), sha256Hex(body("y")))).rejects.toThrow(
      /expected [0-9a-f]{64}/,
    );
    expect(await store.read("1.3.0")).toEqual({ ok: false, reason: "not_found" });
    expect(await store.list()).toEqual([]);
  });

  it("reports a tampered bundle or metadata as corrupt instead of returning it", async () => {
    const { store, dir } = await freshStore();
    await store.add("2.0.0", body("good"));
    await writeFile(join(dir, "2.0.0", BUNDLE_FILE), body("evil"));
    const read = await store.read("2.0.0");
    expect(read).toMatchObject({ ok: false, reason: "corrupt" });
    expect(!read.ok && read.reason === "corrupt" && read.problem).toMatch(/SHA-256 .* says/);

    await store.add("2.1.0", body("good"));
    await writeFile(join(dir, "2.1.0", BUNDLE_META_FILE), "{not json");
    expect(await store.read("2.1.0")).toMatchObject({ ok: false, reason: "corrupt" });
  });

  it("refuses bundles signed by another release key", async () => {
    const { dir } = await freshStore();
    const clock = createManualClock();
    const old = createBundleStore({ dir, releaseKey: generateSigningKeyPair(), clock });
    await old.add("3.0.0", body("old key"));
    const current = createBundleStore({ dir, releaseKey: generateSigningKeyPair(), clock });
    expect(await current.read("3.0.0")).toMatchObject({ ok: false, reason: "corrupt" });
  });

  it("treats versions that are not one safe path segment as absent", async () => {
    const { store } = await freshStore();
    for (const version of ["..", "../x", "a/b", ".hidden", "", "1..2"]) {
      expect(await store.read(version)).toEqual({ ok: false, reason: "not_found" });
    }
    await expect(store.add("../escape", body("x"))).rejects.toThrow(RangeError);
  });

  it("answers a version's metadata without its bytes, and nothing for unknown or unsafe versions", async () => {
    const { store } = await freshStore();
    const { info } = await store.add("1.2.0", body("one two"));
    expect(await store.info("1.2.0")).toEqual(info);
    expect(await store.info("1.3.0")).toBeUndefined();
    expect(await store.info("../1.2.0")).toBeUndefined();
  });

  it("lists stored versions newest first", async () => {
    const { store, clock } = await freshStore();
    expect(await store.list()).toEqual([]);
    await store.add("1.0.0", body("a"));
    clock.advance(1_000);
    await store.add("1.1.0", body("b"));
    expect((await store.list()).map((info) => info.version)).toEqual(["1.1.0", "1.0.0"]);
  });
});
