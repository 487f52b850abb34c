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

export interface HashPasswordOptions {
  random?: RandomBytes;
}

export async function hashPassword(password: string, options: HashPasswordOptions = {}): Promise<string> {
  const { memoryKiB, iterations, parallelism, saltBytes } = PASSWORD_HASH_PARAMS;
  const salt = (options.random ?? systemRandom)(saltBytes);
  const hash = await derive(password, salt, PASSWORD_HASH_PARAMS);
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
