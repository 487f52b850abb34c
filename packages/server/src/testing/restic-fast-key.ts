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
import { poly1305 } from "@noble/ciphers/_poly1305.js";

const COST = { N: 1024, r: 8, p: 1 };

/** restic's Seal: IV, AES-256-CTR ciphertext, then Poly1305-AES of the ciphertext. */
function seal(userKey: Buffer, plaintext: Buffer): Buffer {
  const iv = randomBytes(16);
  const cipher = createCipheriv("aes-256-ctr", userKey.subarray(0, 32), iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  const nonceCipher = createCipheriv("aes-128-ecb", userKey.subarray(32, 48), null).setAutoPadding(false);
  const s = nonceCipher.update(iv);
  // Poly1305-AES: the key is r (clamped by poly1305 itself, as restic clamps it) then s.
  const tag = poly1305(ciphertext, Buffer.concat([userKey.subarray(48, 64), s]));
  return Buffer.concat([iv, ciphertext, tag]);
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
