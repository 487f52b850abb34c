import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateSigningKeyPair } from "@fleetback/crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createManualClock } from "../clock.js";
import { createBundleStore } from "./bundle-store.js";
import { SEA_FILE, seaDirName } from "./sea-store.js";

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "fleetback-sea-store-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function storeWithSea(executable: Uint8Array) {
  const dir = join(await mkdtemp(join(root, "case-")), "agent-bundles");
  const store = createBundleStore({
    dir,
    releaseKey: generateSigningKeyPair(),
    clock: createManualClock(new Date("2026-11-22T06:00:00Z")),
  });
  await store.add("2.0.0", new TextEncoder().encode("// fleetback-agent 2.0.0\n"));
  await store.addSea("2.0.0", "linux", "x64", executable);
  return { store, file: join(dir, "2.0.0", seaDirName("linux", "x64"), SEA_FILE) };
}

async function bytesOf(stream: ReadableStream<Uint8Array>): Promise<Buffer> {
  return Buffer.from(await new Response(stream).arrayBuffer());
}

describe("single-executable store: serving", () => {
  it("streams the stored bytes, sharing one check between concurrent first opens", async () => {
    const executable = randomBytes(3 * 1024 * 1024);
    const { store } = await storeWithSea(executable);
    const opened = await Promise.all([1, 2, 3].map(() => store.openSea("2.0.0", "linux", "x64")));
    for (const open of opened) {
      expect(open.ok).toBe(true);
      if (open.ok) {
        expect(open.info.size).toBe(executable.byteLength);
        expect((await bytesOf(open.stream)).equals(executable)).toBe(true);
      }
    }
  });

  it("checks a file again once it changed on disk, and refuses altered bytes", async () => {
    const executable = randomBytes(64 * 1024);
    const { store, file } = await storeWithSea(executable);
    const first = await store.openSea("2.0.0", "linux", "x64");
    expect(first.ok).toBe(true);
    if (first.ok) {
      await first.stream.cancel();
    }
    const altered = Buffer.from(executable);
    altered[100] = (altered[100] ?? 0) ^ 0xff;
    await writeFile(file, altered);
    const refused = await store.openSea("2.0.0", "linux", "x64");
    expect(refused).toMatchObject({ ok: false, reason: "corrupt" });
    await writeFile(file, executable);
    const again = await store.openSea("2.0.0", "linux", "x64");
    expect(again.ok && (await bytesOf(again.stream)).equals(executable)).toBe(true);
  });

  it("answers not found for unknown versions and platforms", async () => {
    const { store } = await storeWithSea(randomBytes(16));
    expect(await store.openSea("2.0.1", "linux", "x64")).toEqual({ ok: false, reason: "not_found" });
    expect(await store.openSea("2.0.0", "linux", "arm64")).toEqual({ ok: false, reason: "not_found" });
    expect(await store.openSea("2.0.0", "linux", "../x")).toEqual({ ok: false, reason: "not_found" });
  });
});
