import { argon2id as nobleArgon2id } from "@noble/hashes/argon2.js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { Argon2Input } from "./argon2-pool.js";
import { encodeBase64 } from "./base64.js";
import { hashPassword, needsRehash, useTestPasswordHashParams, verifyPassword } from "./password-hash.js";

// Counts the hashes password-hash asks of its pool, so a test can tell "refused before hashing"
// from "hashed and compared" by what happened rather than by how long it took.
const derived = vi.hoisted(() => ({ count: 0 }));
vi.mock("./argon2-pool.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("./argon2-pool.js")>();
  return {
    ...actual,
    createArgon2Pool: (...args: Parameters<typeof actual.createArgon2Pool>) => {
      const pool = actual.createArgon2Pool(...args);
      return {
        ...pool,
        hash: (input: Argon2Input) => {
          derived.count += 1;
          return pool.hash(input);
        },
      };
    },
  };
});

// Cheap hashes for every test but the one about production's parameters: at production cost each
// hash is half a second on an idle machine and seconds on a loaded one (issue 32), and what these
// tests check (format, comparison, normalisation, refusal) does not depend on the cost.
beforeAll(() => useTestPasswordHashParams());
afterAll(() => useTestPasswordHashParams(false));

const zeroSalt = (n: number) => new Uint8Array(n);

/** A PHC string for `password` made by an independent implementation (pure JS, cheap at these sizes). */
function nobleHash(
  password: string,
  salt: Uint8Array,
  params: { t: number; m: number; p: number; dkLen: number },
) {
  const hash = nobleArgon2id(password, salt, params);
  return `$argon2id$v=19$m=${params.m},t=${params.t},p=${params.p}$${encodeBase64(salt, "unpadded")}$${encodeBase64(hash, "unpadded")}`;
}

describe("hashPassword / verifyPassword", () => {
  it("encodes argon2id with its parameters and verifies the right password only", async () => {
    const encoded = await hashPassword("correct horse battery staple");
    expect(encoded).toMatch(/^\$argon2id\$v=19\$m=64,t=1,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    expect(await verifyPassword("correct horse battery staple", encoded)).toBe(true);
    expect(await verifyPassword("correct horse battery stapler", encoded)).toBe(false);
    expect(await verifyPassword("", encoded)).toBe(false);
  });

  it("hashes at production's parameters by default, byte for byte an independent implementation's", async () => {
    // The one production-cost hash of this file: it is what shows the default is still 64 MiB,
    // t=3, p=4 and that hash-wasm gives what @noble/hashes gives for it (computed once offline:
    // nobleArgon2id("pw", 16 zero bytes, { t: 3, m: 65536, p: 4, dkLen: 32 }) costs seconds of pure JS).
    useTestPasswordHashParams(false);
    try {
      const encoded = await hashPassword("pw", { random: zeroSalt });
      expect(encoded).toBe(
        "$argon2id$v=19$m=65536,t=3,p=4$AAAAAAAAAAAAAAAAAAAAAA$0VjZq5nVnDO0QcGEfjNGuNWF/1Vrzq0G2w92yLSpbTI",
      );
      expect(needsRehash(encoded)).toBe(false);
    } finally {
      useTestPasswordHashParams();
    }
  });

  it("matches an independent argon2id implementation across lanes and passes", async () => {
    const encoded = nobleHash("pw", zeroSalt(16), { t: 3, m: 256, p: 4, dkLen: 32 });
    expect(await verifyPassword("pw", encoded)).toBe(true);
    expect(await verifyPassword("pW", encoded)).toBe(false);
  });

  it("verifies hashes made with other (smaller) parameters and flags them for rehash", async () => {
    const encoded = nobleHash("öperator", new Uint8Array(16).fill(3), { t: 2, m: 256, p: 1, dkLen: 24 });
    expect(await verifyPassword("öperator", encoded)).toBe(true);
    expect(await verifyPassword("operator", encoded)).toBe(false);
    expect(needsRehash(encoded)).toBe(true);
  });

  it("treats canonically equivalent Unicode spellings as the same password", async () => {
    const encoded = await hashPassword("caf\u00e9");
    expect(await verifyPassword("cafe\u0301", encoded)).toBe(true);
  });

  it("refuses malformed, foreign or out-of-bounds hashes without hashing at all", async () => {
    // Parameters each variant below can leave in bounds but one: p=17 still fits m=256.
    const valid = nobleHash("pw", zeroSalt(16), { t: 1, m: 256, p: 1, dkLen: 32 });
    const [, , , , salt, hash] = valid.split("$");
    const params = "m=256,t=1,p=1";
    const bad = [
      "",
      "not a hash",
      `$argon2i$v=19$${params}$${salt}$${hash}`,
      `$argon2d$v=19$${params}$${salt}$${hash}`,
      `$argon2id$v=16$${params}$${salt}$${hash}`,
      `$argon2id$${params}$${salt}$${hash}`,
      `$argon2id$v=19$m=4194304,t=1,p=1$${salt}$${hash}`,
      `$argon2id$v=19$m=262145,t=1,p=1$${salt}$${hash}`,
      `$argon2id$v=19$m=256,t=11,p=1$${salt}$${hash}`,
      `$argon2id$v=19$m=256,t=0,p=1$${salt}$${hash}`,
      `$argon2id$v=19$m=256,t=1,p=17$${salt}$${hash}`,
      `$argon2id$v=19$m=256,t=1,p=0$${salt}$${hash}`,
      `$argon2id$v=19$m=16,t=1,p=4$${salt}$${hash}`,
      `$argon2id$v=19$${params}$AAAA$${hash}`,
      `$argon2id$v=19$${params}$${salt}$AAAAAAAA`,
      `$argon2id$v=19$${params}$${salt}==$${hash}`,
      `$argon2id$v=19$${params}$${salt}$${hash}=`,
      `$argon2id$v=19$${params}$${salt}$${hash?.slice(0, -1)}J`,
      `$argon2id$v=19$${params}$${salt}$${hash}\n`,
      `$argon2id$v=19$${params},data=x$${salt}$${hash}`,
    ];
    const before = derived.count;
    for (const encoded of bad) {
      expect(await verifyPassword("pw", encoded), encoded).toBe(false);
      expect(needsRehash(encoded), encoded).toBe(true);
    }
    // Refused by parsing alone: an out-of-bounds row never gets to cost a hash (4 GiB, 11 passes).
    expect(derived.count).toBe(before);
    // The unmodified string verifies, so each failure above is down to its one change.
    expect(await verifyPassword("pw", valid)).toBe(true);
    expect(derived.count).toBe(before + 1);
  });

  it("never throws for non-string input from untyped callers", async () => {
    const verify = verifyPassword as (password: unknown, encoded: unknown) => Promise<boolean>;
    expect(await verify(undefined, undefined)).toBe(false);
    expect(await verify(42, { hash: "x" })).toBe(false);
  });
});
