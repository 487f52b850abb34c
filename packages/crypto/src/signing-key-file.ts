/**
 * @module A long-lived Ed25519 signing key in a key file (the server's `release.key`). The file
 * holds the 32-byte RFC 8032 seed, so it is created, published and validated by the same code as
 * the secret key: written once, never overwritten, refused when its size is wrong.
 */
import { ed25519 } from "@noble/curves/ed25519.js";
import { hkdf } from "@noble/hashes/hkdf.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { fingerprint, type SigningKeyPair } from "./ed25519.js";
import { type LoadOrCreateKeyOptions, loadOrCreateKey } from "./key-file.js";

export interface LoadedSigningKey {
  keyPair: SigningKeyPair;
  /** `SHA256:` fingerprint of the public key, as `fingerprint()` prints it. */
  fingerprint: string;
  created: boolean;
  warnings: string[];
}

/** Any 32 bytes are a valid Ed25519 seed; the public key is derived from it on every load. */
export function signingKeyPairFromSeed(seed: Uint8Array): SigningKeyPair {
  return { publicKey: ed25519.getPublicKey(seed), secretKey: seed };
}

/**
 * A signing key pair derived from a long-lived secret (HKDF-SHA256) for one purpose: a key that
 * need not be a file of its own (backed up, shared by replicas, kept apart) because the secret
 * already is, and that means nothing for any other purpose.
 */
export function deriveSigningKeyPair(secret: Uint8Array, purpose: string): SigningKeyPair {
  return signingKeyPairFromSeed(
    hkdf(sha256, secret, undefined, new TextEncoder().encode(`fleetback signing key: ${purpose}`), 32),
  );
}

/** Like loadOrCreateKey (same errors), returning the key pair whose seed the file holds. */
export async function loadOrCreateSigningKey(
  path: string,
  options: LoadOrCreateKeyOptions = {},
): Promise<LoadedSigningKey> {
  const loaded = await loadOrCreateKey(path, options);
  const keyPair = signingKeyPairFromSeed(loaded.key);
  return {
    keyPair,
    fingerprint: fingerprint(keyPair.publicKey),
    created: loaded.created,
    warnings: loaded.warnings,
  };
}
