/**
 * @module Secrets at rest (repository and admin credentials, hooks) sealed with XChaCha20-Poly1305.
 * The 24-byte nonce is random per message, which is safe at any realistic message count for this
 * cipher. The caller's AAD names the owner ("enrolment:<token hash>", "host:<host id>"), so a
 * ciphertext copied to another owner's row fails to open instead of decrypting for the wrong host.
 *
 * Byte format, version 0x01: version (1) ‖ nonce (24) ‖ ciphertext ‖ Poly1305 tag (16).
 * The version byte is also fed to the cipher as AAD prefix, so it cannot be swapped undetected
 * once a second version exists.
 */
import { xchacha20poly1305 } from "@noble/ciphers/chacha.js";
import { type RandomBytes, systemRandom } from "./random.js";

export const SEAL_VERSION = 0x01;
export const SEAL_KEY_BYTES = 32;
const NONCE_BYTES = 24;
const TAG_BYTES = 16;
const HEADER_BYTES = 1 + NONCE_BYTES;

export type OpenFailure = "unknown_version" | "truncated" | "authentication_failed";
export type OpenResult = { ok: true; plaintext: Uint8Array } | { ok: false; reason: OpenFailure };
export type OpenStringResult =
  | { ok: true; plaintext: string }
  | { ok: false; reason: OpenFailure | "invalid_utf8" };
export type OpenJsonResult =
  | { ok: true; value: unknown }
  | { ok: false; reason: OpenFailure | "invalid_utf8" | "invalid_json" };

export interface SealOptions {
  random?: RandomBytes;
}

const utf8 = new TextEncoder();
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

export function seal(
  key: Uint8Array,
  plaintext: string | Uint8Array,
  aad: string,
  options: SealOptions = {},
): Uint8Array {
  assertKey(key);
  const random = options.random ?? systemRandom;
  const nonce = random(NONCE_BYTES);
  if (nonce.length !== NONCE_BYTES) {
    throw new RangeError(`random source returned ${nonce.length} bytes; expected ${NONCE_BYTES}`);
  }
  const message = typeof plaintext === "string" ? utf8.encode(plaintext) : plaintext;
  const ciphertext = xchacha20poly1305(key, nonce, cipherAad(SEAL_VERSION, aad)).encrypt(message);
  const sealed = new Uint8Array(HEADER_BYTES + ciphertext.length);
  sealed[0] = SEAL_VERSION;
  sealed.set(nonce, 1);
  sealed.set(ciphertext, HEADER_BYTES);
  return sealed;
}

/** Never throws for bad or foreign input; only a key of the wrong size (a programming error) throws. */
export function open(key: Uint8Array, sealed: Uint8Array, aad: string): OpenResult {
  assertKey(key);
  if (sealed.length === 0) {
    return { ok: false, reason: "truncated" };
  }
  const version = sealed[0];
  if (version !== SEAL_VERSION) {
    return { ok: false, reason: "unknown_version" };
  }
  if (sealed.length < HEADER_BYTES + TAG_BYTES) {
    return { ok: false, reason: "truncated" };
  }
  const nonce = sealed.subarray(1, HEADER_BYTES);
  try {
    const plaintext = xchacha20poly1305(key, nonce, cipherAad(version, aad)).decrypt(
      sealed.subarray(HEADER_BYTES),
    );
    return { ok: true, plaintext };
  } catch {
    return { ok: false, reason: "authentication_failed" };
  }
}

export function sealString(
  key: Uint8Array,
  plaintext: string,
  aad: string,
  options?: SealOptions,
): Uint8Array {
  return seal(key, plaintext, aad, options);
}

export function openString(key: Uint8Array, sealed: Uint8Array, aad: string): OpenStringResult {
  const opened = open(key, sealed, aad);
  if (!opened.ok) {
    return opened;
  }
  try {
    return { ok: true, plaintext: strictUtf8.decode(opened.plaintext) };
  } catch {
    return { ok: false, reason: "invalid_utf8" };
  }
}

export function sealJson(key: Uint8Array, value: unknown, aad: string, options?: SealOptions): Uint8Array {
  const text = JSON.stringify(value);
  if (text === undefined) {
    throw new TypeError("sealJson: value has no JSON representation");
  }
  return seal(key, text, aad, options);
}

/** The value is `unknown`: callers validate its shape with their own schema. */
export function openJson(key: Uint8Array, sealed: Uint8Array, aad: string): OpenJsonResult {
  const opened = openString(key, sealed, aad);
  if (!opened.ok) {
    return opened;
  }
  try {
    return { ok: true, value: JSON.parse(opened.plaintext) as unknown };
  } catch {
    return { ok: false, reason: "invalid_json" };
  }
}

function cipherAad(version: number, aad: string): Uint8Array {
  const owner = utf8.encode(aad);
  const bytes = new Uint8Array(1 + owner.length);
  bytes[0] = version;
  bytes.set(owner, 1);
  return bytes;
}

function assertKey(key: Uint8Array): void {
  if (!(key instanceof Uint8Array) || key.length !== SEAL_KEY_BYTES) {
    throw new RangeError(`seal key must be ${SEAL_KEY_BYTES} bytes`);
  }
}
