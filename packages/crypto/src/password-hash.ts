/**
 * @module Operator passwords: argon2id with 64 MiB, 3 iterations, parallelism 4 and a 32-byte
 * output, stored as a PHC string (`$argon2id$v=19$m=65536,t=3,p=4$<salt>$<hash>`) so parameters
 * can be raised later without breaking existing rows (see `needsRehash`).
 *
 * The encoded string comes from the database, so verification parses it strictly and caps its
 * parameters: a tampered row must not be able to make one login burn gigabytes or minutes.
 * Passwords are NFKC-normalised (NIST SP 800-63B) so the same typed password verifies on any device.
 * The hashing itself runs in a worker pool (see argon2-pool) so it never blocks the caller's thread.
 */
import { timingSafeEqual } from "node:crypto";
import { type Argon2Pool, createArgon2Pool } from "./argon2-pool.js";
import { decodeBase64Strict, encodeBase64 } from "./base64.js";
import { type RandomBytes, systemRandom } from "./random.js";

export interface Argon2Params {
  /** Memory in KiB. */
  memoryKiB: number;
  iterations: number;
  parallelism: number;
  hashBytes: number;
  saltBytes: number;
}

export const PASSWORD_HASH_PARAMS: Readonly<Argon2Params> = Object.freeze({
  memoryKiB: 65_536,
  iterations: 3,
  parallelism: 4,
  hashBytes: 32,
  saltBytes: 16,
});

/** Upper bounds accepted from a stored hash; anything above is treated as tampering. */
const LIMITS = { memoryKiB: 262_144, iterations: 10, parallelism: 16, minBytes: 8, maxBytes: 64 } as const;

const PHC = /^\$argon2id\$v=19\$m=(\d{1,7}),t=(\d{1,3}),p=(\d{1,3})\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/;

interface ParsedHash {
  params: Argon2Params;
  salt: Uint8Array;
  hash: Uint8Array;
}

/**
 * Cheap parameters for test suites that create and sign in hundreds of users: at production cost
 * each hash takes 0.5 s on an idle 2-core machine and several seconds on a loaded CI run, which
 * was most of the server suite's time. Verification reads the parameters from the stored string,
 * so a cheap hash verifies cheaply and a production one still verifies.
 */
export const TEST_PASSWORD_HASH_PARAMS: Readonly<Argon2Params> = Object.freeze({
  memoryKiB: 64,
  iterations: 1,
  parallelism: 1,
  hashBytes: 32,
  saltBytes: 16,
});

let hashParams: Readonly<Argon2Params> = PASSWORD_HASH_PARAMS;

/**
 * Makes new hashes in this process use TEST_PASSWORD_HASH_PARAMS, or production cost again with
 * `false` (a test that measures what hashing costs the event loop needs the real cost). Refused
 * outside a test runner (vitest sets VITEST), so a production process can never be switched to
 * weak hashes.
 */
export function useTestPasswordHashParams(enabled = true, env: NodeJS.ProcessEnv = process.env): void {
  if (env.VITEST === undefined) {
    throw new Error("useTestPasswordHashParams: only a test runner may lower the password hash cost");
  }
  hashParams = enabled ? TEST_PASSWORD_HASH_PARAMS : PASSWORD_HASH_PARAMS;
}

export interface HashPasswordOptions {
  random?: RandomBytes;
}

export async function hashPassword(password: string, options: HashPasswordOptions = {}): Promise<string> {
  const params = hashParams;
  const { memoryKiB, iterations, parallelism, saltBytes } = params;
  const salt = (options.random ?? systemRandom)(saltBytes);
  const hash = await derive(password, salt, params);
  return `$argon2id$v=19$m=${memoryKiB},t=${iterations},p=${parallelism}$${encodeBase64(salt, "unpadded")}$${encodeBase64(hash, "unpadded")}`;
}

/** False for a wrong password and for any malformed or out-of-bounds encoded hash; never throws. */
export async function verifyPassword(password: string, encoded: string): Promise<boolean> {
  try {
    const parsed = parsePasswordHash(encoded);
    if (!parsed || typeof password !== "string") {
      return false;
    }
    const candidate = await derive(password, parsed.salt, parsed.params);
    return candidate.length === parsed.hash.length && timingSafeEqual(candidate, parsed.hash);
  } catch {
    return false;
  }
}

/** True when the stored hash should be replaced after a successful login (or cannot be read). */
export function needsRehash(encoded: string): boolean {
  const parsed = parsePasswordHash(encoded);
  if (!parsed) {
    return true;
  }
  const current = PASSWORD_HASH_PARAMS;
  return (
    parsed.params.memoryKiB !== current.memoryKiB ||
    parsed.params.iterations !== current.iterations ||
    parsed.params.parallelism !== current.parallelism ||
    parsed.params.hashBytes !== current.hashBytes ||
    parsed.params.saltBytes !== current.saltBytes
  );
}

function parsePasswordHash(encoded: string): ParsedHash | undefined {
  const match = typeof encoded === "string" ? PHC.exec(encoded) : null;
  if (!match) {
    return undefined;
  }
  const [, m, t, p, saltText, hashText] = match;
  const memoryKiB = Number(m);
  const iterations = Number(t);
  const parallelism = Number(p);
  const salt = decodeBase64Strict(saltText ?? "", "unpadded");
  const hash = decodeBase64Strict(hashText ?? "", "unpadded");
  const withinLimits =
    iterations >= 1 &&
    iterations <= LIMITS.iterations &&
    parallelism >= 1 &&
    parallelism <= LIMITS.parallelism &&
    memoryKiB >= 8 * parallelism &&
    memoryKiB <= LIMITS.memoryKiB;
  if (!withinLimits || !salt || !hash || !isSaneLength(salt) || !isSaneLength(hash) || hash.length < 16) {
    return undefined;
  }
  return {
    params: { memoryKiB, iterations, parallelism, hashBytes: hash.length, saltBytes: salt.length },
    salt,
    hash,
  };
}

function isSaneLength(bytes: Uint8Array): boolean {
  return bytes.length >= LIMITS.minBytes && bytes.length <= LIMITS.maxBytes;
}

let pool: Argon2Pool | undefined;

async function derive(password: string, salt: Uint8Array, params: Argon2Params): Promise<Uint8Array> {
  pool ??= createArgon2Pool();
  return pool.hash({
    password: password.normalize("NFKC"),
    salt,
    memorySize: params.memoryKiB,
    iterations: params.iterations,
    parallelism: params.parallelism,
    hashLength: params.hashBytes,
  });
}
