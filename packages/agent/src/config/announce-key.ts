/**
 * @module config/announce-key
 * The Ed25519 key pair of an announcing agent, kept in the state dir (mode 0600) so that running
 * `announce` again shows the same fingerprint the operator may already have compared. It proves
 * the claim comes from the machine that announced; once the token is claimed it has no use left
 * and is removed.
 */
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { generateSigningKeyPair, type SigningKeyPair } from "@fleetback/crypto";
import { Type } from "typebox";
import { Check } from "typebox/value";
import { writeFileAtomic } from "./atomic-write.js";

export const ANNOUNCE_KEY_FILE_NAME = "announce-key.json";

const StoredKey = Type.Object({
  public_key: Type.String({ minLength: 1 }),
  secret_key: Type.String({ minLength: 1 }),
});

export function announceKeyPath(stateDir: string): string {
  return join(stateDir, ANNOUNCE_KEY_FILE_NAME);
}

export async function loadOrCreateAnnounceKey(stateDir: string): Promise<SigningKeyPair> {
  const path = announceKeyPath(stateDir);
  try {
    const stored: unknown = JSON.parse(await readFile(path, "utf8"));
    if (Check(StoredKey, stored)) {
      const publicKey = new Uint8Array(Buffer.from(stored.public_key, "base64"));
      const secretKey = new Uint8Array(Buffer.from(stored.secret_key, "base64"));
      if (publicKey.length === 32 && secretKey.length === 32) {
        return { publicKey, secretKey };
      }
    }
  } catch {
    // Missing or unreadable: a new key pair, and a new fingerprint to compare.
  }
  const pair = generateSigningKeyPair();
  const stored = {
    public_key: Buffer.from(pair.publicKey).toString("base64"),
    secret_key: Buffer.from(pair.secretKey).toString("base64"),
  };
  await writeFileAtomic(path, `${JSON.stringify(stored)}\n`, 0o600);
  return pair;
}

export async function removeAnnounceKey(stateDir: string): Promise<void> {
  await rm(announceKeyPath(stateDir), { force: true });
}
