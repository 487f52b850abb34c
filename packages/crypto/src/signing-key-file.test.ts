import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fingerprint, sign, verifySignature } from "./ed25519.js";
import { KeyFileError } from "./key-file.js";
import { deriveSigningKeyPair, loadOrCreateSigningKey } from "./signing-key-file.js";

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "fleetback-signing-key-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("loadOrCreateSigningKey", () => {
  it("creates the key once and derives the same key pair on every later load", async () => {
    const path = join(await mkdtemp(join(root, "case-")), "release.key");
    const first = await loadOrCreateSigningKey(path);
    expect(first.created).toBe(true);
    const bytes = await readFile(path);
    const second = await loadOrCreateSigningKey(path);
    expect(second.created).toBe(false);
    expect(await readFile(path)).toEqual(bytes);
    expect(second.keyPair.publicKey).toEqual(first.keyPair.publicKey);
    expect(second.fingerprint).toBe(fingerprint(first.keyPair.publicKey));
    const signature = sign(first.keyPair.secretKey, "bundle");
    expect(verifySignature(second.keyPair.publicKey, "bundle", signature)).toBe(true);
    expect(verifySignature(second.keyPair.publicKey, "bundle!", signature)).toBe(false);
  });

  it("refuses a short file, says what replacing it costs, and leaves it alone", async () => {
    const path = join(await mkdtemp(join(root, "case-")), "release.key");
    await writeFile(path, new Uint8Array(31), { mode: 0o600 });
    const error = await loadOrCreateSigningKey(path, {
      replacing: "makes agents refuse updates signed by the new key",
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KeyFileError);
    expect((error as KeyFileError).problem).toBe("wrong_size");
    expect((error as KeyFileError).message).toContain("31 bytes; expected 32");
    expect((error as KeyFileError).message).toContain("makes agents refuse updates signed by the new key");
    expect((await readFile(path)).length).toBe(31);
  });
});

describe("deriveSigningKeyPair", () => {
  it("derives one key per secret and purpose, and signatures of one do not verify under another", () => {
    const secret = new Uint8Array(32).fill(3);
    const a = deriveSigningKeyPair(secret, "restore orders");
    expect(deriveSigningKeyPair(secret, "restore orders").publicKey).toEqual(a.publicKey);
    const other = deriveSigningKeyPair(secret, "something else");
    const message = new TextEncoder().encode("order");
    const signature = sign(a.secretKey, message);
    expect(verifySignature(a.publicKey, message, signature)).toBe(true);
    expect(verifySignature(other.publicKey, message, signature)).toBe(false);
    expect(deriveSigningKeyPair(new Uint8Array(32).fill(4), "restore orders").publicKey).not.toEqual(
      a.publicKey,
    );
  });
});
