/**
 * @module Ed25519 keys of announcing agents. An announce is unauthenticated, so its public key is
 * checked strictly: canonical base64 of exactly 32 bytes that decode to a valid curve point
 * outside the small-order torsion group (such keys make every signature check meaningless).
 * The operator compares `fingerprint(key)` with what the agent prints, in the OpenSSH
 * `SHA256:<unpadded base64>` style people already know from ssh.
 */
import { ed25519 } from "@noble/curves/ed25519.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { decodeBase64Strict, encodeBase64 } from "./base64.js";

export const ED25519_PUBLIC_KEY_BYTES = 32;

export type PublicKeyProblem = "not_base64" | "wrong_length" | "invalid_point" | "weak_point";
export type ParsePublicKeyResult = { ok: true; key: Uint8Array } | { ok: false; reason: PublicKeyProblem };

export interface SigningKeyPair {
  publicKey: Uint8Array;
  secretKey: Uint8Array;
}

/** Accepts only canonical, padded standard base64 (44 characters for 32 bytes). */
export function parsePublicKey(base64: string): ParsePublicKeyResult {
  const key = typeof base64 === "string" ? decodeBase64Strict(base64, "padded") : undefined;
  if (!key) {
    return { ok: false, reason: "not_base64" };
  }
  if (key.length !== ED25519_PUBLIC_KEY_BYTES) {
    return { ok: false, reason: "wrong_length" };
  }
  let point: ReturnType<typeof ed25519.Point.fromBytes>;
  try {
    point = ed25519.Point.fromBytes(key, false);
  } catch {
    return { ok: false, reason: "invalid_point" };
  }
  // Honest keys are multiples of the base point, so they are never small-order or mixed-order.
  if (point.isSmallOrder() || !point.isTorsionFree()) {
    return { ok: false, reason: "weak_point" };
  }
  return { ok: true, key };
}

/** `SHA256:` + unpadded standard base64 of SHA-256 over the 32 raw key bytes. */
export function fingerprint(publicKey: Uint8Array): string {
  if (publicKey.length !== ED25519_PUBLIC_KEY_BYTES) {
    throw new RangeError(`an Ed25519 public key is ${ED25519_PUBLIC_KEY_BYTES} bytes`);
  }
  return `SHA256:${encodeBase64(sha256(publicKey), "unpadded")}`;
}

export function encodePublicKey(publicKey: Uint8Array): string {
  return encodeBase64(publicKey, "padded");
}

export function generateSigningKeyPair(): SigningKeyPair {
  const { publicKey, secretKey } = ed25519.keygen();
  return { publicKey, secretKey };
}

export function sign(secretKey: Uint8Array, message: string | Uint8Array): Uint8Array {
  return ed25519.sign(toBytes(message), secretKey);
}

/** Strict RFC 8032 verification; false for any malformed key, signature or message. Never throws. */
export function verifySignature(
  publicKey: Uint8Array,
  message: string | Uint8Array,
  signature: Uint8Array,
): boolean {
  try {
    return ed25519.verify(signature, toBytes(message), publicKey, { zip215: false });
  } catch {
    return false;
  }
}

function toBytes(message: string | Uint8Array): Uint8Array {
  return typeof message === "string" ? new TextEncoder().encode(message) : message;
}
