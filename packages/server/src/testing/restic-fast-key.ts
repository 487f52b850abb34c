/**
 * @module testing/restic-fast-key
 * restic calibrates its key derivation (scrypt) to about half a second on the machine that makes
 * the key and pays it again on every run, which made a test of a hundred restic runs a minute of
 * CPU. restic's own tests lower the cost with a switch its release binaries do not have, so this
 * rewrites a test repository's key file the way restic writes one (internal/repository/key.go,
 * internal/crypto), around the same master key at scrypt's lowest sensible cost. A mistake here is
 * loud: restic then finds no key for the password.
 */
import { createCipheriv, createHash, randomBytes, scryptSync } from "node:crypto";
import { readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const COST = { N: 1024, r: 8, p: 1 };

function littleEndian(bytes: Uint8Array): bigint {
  let value = 0n;
  for (let index = bytes.length - 1; index >= 0; index -= 1) {
    value = (value << 8n) | BigInt(bytes[index] ?? 0);
  }
  return value;
}

/** Poly1305 with key r||s, r clamped as restic and RFC 8439 clamp it. */
function poly1305(message: Buffer, r: Buffer, s: Buffer): Buffer {
  const clamped = Buffer.from(r);
  for (const index of [3, 7, 11, 15]) {
    clamped[index] = (clamped[index] ?? 0) & 0x0f;
  }
  for (const index of [4, 8, 12]) {
    clamped[index] = (clamped[index] ?? 0) & 0xfc;
  }
  const prime = (1n << 130n) - 5n;
  const rValue = littleEndian(clamped);
  let accumulator = 0n;
  for (let offset = 0; offset < message.length; offset += 16) {
    const block = message.subarray(offset, offset + 16);
    accumulator = ((accumulator + littleEndian(block) + (1n << BigInt(8 * block.length))) * rValue) % prime;
  }
  let tag = (accumulator + littleEndian(s)) & ((1n << 128n) - 1n);
  const out = Buffer.alloc(16);
  for (let index = 0; index < 16; index += 1) {
    out[index] = Number(tag & 0xffn);
    tag >>= 8n;
  }
  return out;
}

/** restic's Seal: IV, AES-256-CTR ciphertext, then Poly1305-AES of the ciphertext. */
function seal(userKey: Buffer, plaintext: Buffer): Buffer {
  const iv = randomBytes(16);
  const cipher = createCipheriv("aes-256-ctr", userKey.subarray(0, 32), iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  const nonceCipher = createCipheriv("aes-128-ecb", userKey.subarray(32, 48), null).setAutoPadding(false);
  const s = nonceCipher.update(iv);
  return Buffer.concat([iv, ciphertext, poly1305(ciphertext, userKey.subarray(48, 64), s)]);
}

/**
 * Replaces the keys of the local repository at `repositoryDir` with one key for `password` that
 * unlocks `masterKeyJson` (what `restic cat masterkey` prints).
 */
export function writeFastKey(repositoryDir: string, password: string, masterKeyJson: string): void {
  const salt = randomBytes(64);
  const userKey = scryptSync(password, salt, 64, COST);
  const key = {
    created: new Date().toISOString(),
    username: "test",
    hostname: "test",
    kdf: "scrypt",
    ...COST,
    salt: salt.toString("base64"),
    data: seal(userKey, Buffer.from(masterKeyJson.trim())).toString("base64"),
  };
  const body = Buffer.from(JSON.stringify(key));
  const keys = join(repositoryDir, "keys");
  const previous = readdirSync(keys);
  writeFileSync(join(keys, createHash("sha256").update(body).digest("hex")), body);
  for (const name of previous) {
    rmSync(join(keys, name));
  }
}
