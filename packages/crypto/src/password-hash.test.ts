import { argon2id as nobleArgon2id } from "@noble/hashes/argon2.js";
import { describe, expect, it } from "vitest";
import { encodeBase64 } from "./base64.js";
import { hashPassword, needsRehash, verifyPassword } from "./password-hash.js";

const zeroSalt = (n: number) => new Uint8Array(n);

describe("hashPassword / verifyPassword", () => {
  it("encodes argon2id with its parameters and verifies the right password only", async () => {
    const encoded = await hashPassword("correct horse battery staple");
    expect(encoded).toMatch(/^\$argon2id\$v=19\$m=65536,t=3,p=4\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    expect(await verifyPassword("correct horse battery staple", encoded)).toBe(true);
    expect(await verifyPassword("correct horse battery stapler", encoded)).toBe(false);
    expect(await verifyPassword("", encoded)).toBe(false);
    expect(needsRehash(encoded)).toBe(false);
  });

  it("matches an independent argon2id implementation (known answer from @noble/hashes)", async () => {
    // nobleArgon2id("pw", 16 zero bytes, { t: 3, m: 65536, p: 4, dkLen: 32 }), computed once offline:
    // running it here would cost seconds of pure-JS hashing.
    const encoded = await hashPassword("pw", { random: zeroSalt });
    expect(encoded).toBe(
      "$argon2id$v=19$m=65536,t=3,p=4$AAAAAAAAAAAAAAAAAAAAAA$0VjZq5nVnDO0QcGEfjNGuNWF/1Vrzq0G2w92yLSpbTI",
    );
  });

  it("verifies hashes made with other (smaller) parameters and flags them for rehash", async () => {
    const salt = new Uint8Array(16).fill(3);
    const hash = nobleArgon2id("öperator", salt, { t: 2, m: 256, p: 1, dkLen: 24 });
    const encoded = `$argon2id$v=19$m=256,t=2,p=1$${encodeBase64(salt, "unpadded")}$${encodeBase64(hash, "unpadded")}`;
    expect(await verifyPassword("öperator", encoded)).toBe(true);
    expect(await verifyPassword("operator", encoded)).toBe(false);
    expect(needsRehash(encoded)).toBe(true);
  });

  it("treats canonically equivalent Unicode spellings as the same password", async () => {
    const encoded = await hashPassword("caf\u00e9");
    expect(await verifyPassword("cafe\u0301", encoded)).toBe(true);
  });

  it("returns false quickly for malformed, foreign or out-of-bounds hashes", async () => {
    const salt = "AAAAAAAAAAAAAAAAAAAAAA";
    const hash = "0VjZq5nVnDO0QcGEfjNGuNWF/1Vrzq0G2w92yLSpbTI";
    const bad = [
      "",
      "not a hash",
      `$argon2i$v=19$m=65536,t=3,p=4$${salt}$${hash}`,
      `$argon2d$v=19$m=65536,t=3,p=4$${salt}$${hash}`,
      `$argon2id$v=16$m=65536,t=3,p=4$${salt}$${hash}`,
      `$argon2id$m=65536,t=3,p=4$${salt}$${hash}`,
      `$argon2id$v=19$m=4194304,t=3,p=4$${salt}$${hash}`,
      `$argon2id$v=19$m=262145,t=3,p=4$${salt}$${hash}`,
      `$argon2id$v=19$m=65536,t=11,p=4$${salt}$${hash}`,
      `$argon2id$v=19$m=65536,t=0,p=4$${salt}$${hash}`,
      `$argon2id$v=19$m=65536,t=3,p=17$${salt}$${hash}`,
      `$argon2id$v=19$m=65536,t=3,p=0$${salt}$${hash}`,
      `$argon2id$v=19$m=16,t=3,p=4$${salt}$${hash}`,
      `$argon2id$v=19$m=65536,t=3,p=4$AAAA$${hash}`,
      `$argon2id$v=19$m=65536,t=3,p=4$${salt}$AAAAAAAA`,
      `$argon2id$v=19$m=65536,t=3,p=4$${salt}==$${hash}`,
      `$argon2id$v=19$m=65536,t=3,p=4$${salt}$${hash}=`,
      `$argon2id$v=19$m=65536,t=3,p=4$${salt}$${hash.slice(0, -1)}J`,
      `$argon2id$v=19$m=65536,t=3,p=4$${salt}$${hash}\n`,
      `$argon2id$v=19$m=65536,t=3,p=4,data=x$${salt}$${hash}`,
    ];
    const started = performance.now();
    for (const encoded of bad) {
      expect(await verifyPassword("pw", encoded), encoded).toBe(false);
      expect(needsRehash(encoded), encoded).toBe(true);
    }
    expect(performance.now() - started).toBeLessThan(500);
    // The unmodified string verifies, so each failure above is down to its one change.
    expect(await verifyPassword("pw", `$argon2id$v=19$m=65536,t=3,p=4$${salt}$${hash}`)).toBe(true);
  });

  it("never throws for non-string input from untyped callers", async () => {
    const verify = verifyPassword as (password: unknown, encoded: unknown) => Promise<boolean>;
    expect(await verify(undefined, undefined)).toBe(false);
    expect(await verify(42, { hash: "x" })).toBe(false);
  });
});
