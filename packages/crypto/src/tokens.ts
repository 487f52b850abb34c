/**
 * @module Bearer tokens and generated secrets. Tokens carry a short prefix so a leaked one is
 * recognisable (by people and by secret scanners) as a Fleetback credential of a given kind.
 * Only `hashToken(token)` is stored: tokens have 256 bits of entropy, so a plain SHA-256 is enough
 * and lets the server find a row by hash without a slow KDF.
 */
import { timingSafeEqual } from "node:crypto";
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import { encodeBase64Url } from "./base64.js";
import { type RandomBytes, systemRandom } from "./random.js";

export const TOKEN_PREFIXES = {
  /** One-time enrolment token minted by an operator. */
  enrolment: "fbe",
  /** Agent bearer token for the WebSocket upgrade. */
  agent: "fba",
  /** A user's API token. */
  userApi: "fbu",
  /** Browser session cookie value. */
  session: "fbs",
  /** One-time bootstrap token that creates the first admin. */
  bootstrap: "fbb",
} as const;

export type TokenPrefix = (typeof TOKEN_PREFIXES)[keyof typeof TOKEN_PREFIXES];

export const REPOSITORY_PASSWORD_BYTES = 24;
const MIN_TOKEN_BYTES = 16;

export interface RandomOptions {
  random?: RandomBytes;
}

/** `${prefix}_${base64url(bytes)}`; 32 random bytes give 43 characters after the prefix. */
export function randomToken(prefix: TokenPrefix, options: RandomOptions & { bytes?: number } = {}): string {
  const length = options.bytes ?? 32;
  if (!Number.isInteger(length) || length < MIN_TOKEN_BYTES) {
    throw new RangeError(`a token needs at least ${MIN_TOKEN_BYTES} random bytes`);
  }
  return `${prefix}_${encodeBase64Url(draw(options.random, length))}`;
}

/** Lowercase hex SHA-256 of the token's UTF-8 bytes: the only form of a token that is stored. */
export function hashToken(token: string): string {
  return bytesToHex(sha256(new TextEncoder().encode(token)));
}

/**
 * 24 random bytes as base64url: 32 characters from [A-Za-z0-9_-], safe in a URL's userinfo,
 * an htpasswd snippet and a shell argument without quoting.
 */
export function generateRepositoryPassword(options: RandomOptions = {}): string {
  return encodeBase64Url(draw(options.random, REPOSITORY_PASSWORD_BYTES));
}

/**
 * Compares SHA-256 digests rather than the inputs so that neither the content nor the length of
 * a secret shows in the timing.
 */
export function constantTimeEqual(a: string | Uint8Array, b: string | Uint8Array): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

function digest(value: string | Uint8Array): Uint8Array {
  return sha256(typeof value === "string" ? new TextEncoder().encode(value) : value);
}

function draw(random: RandomBytes | undefined, length: number): Uint8Array {
  const bytes = (random ?? systemRandom)(length);
  if (bytes.length !== length) {
    throw new RangeError(`random source returned ${bytes.length} bytes; expected ${length}`);
  }
  return bytes;
}
