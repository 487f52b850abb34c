// A file of its own: lowering the cost changes this module's state for the rest of the file.
import { argon2id as nobleArgon2id } from "@noble/hashes/argon2.js";
import { describe, expect, it } from "vitest";
import { encodeBase64 } from "./base64.js";
import {
  hashPassword,
  needsRehash,
  PASSWORD_HASH_PARAMS,
  useTestPasswordHashParams,
  verifyPassword,
} from "./password-hash.js";

describe("useTestPasswordHashParams", () => {
  it("is refused outside a test runner", () => {
    expect(() => useTestPasswordHashParams(true, {})).toThrow(/only a test runner/);
  });

  it("makes cheap hashes that verify, that production policy flags for rehash, and still verifies stored hashes", async () => {
    // A row stored at other parameters than the current ones: cheap (not production's 64 MiB) so the
    // test costs no production hash to show verification reads the row's parameters, not the switch.
    const salt = new Uint8Array(16).fill(5);
    const stored = `$argon2id$v=19$m=256,t=2,p=2$${encodeBase64(salt, "unpadded")}$${encodeBase64(
      nobleArgon2id("a long enough passphrase", salt, { t: 2, m: 256, p: 2, dkLen: 32 }),
      "unpadded",
    )}`;
    useTestPasswordHashParams();
    const cheap = await hashPassword("a long enough passphrase");
    expect(cheap).toMatch(/^\$argon2id\$v=19\$m=64,t=1,p=1\$/);
    expect(await verifyPassword("a long enough passphrase", cheap)).toBe(true);
    expect(await verifyPassword("another passphrase", cheap)).toBe(false);
    expect(needsRehash(cheap)).toBe(true);
    expect(await verifyPassword("a long enough passphrase", stored)).toBe(true);
    // Switching back is the one production-cost hash here: it is what shows the switch restores
    // production's parameters (password-hash.test.ts shows they are the default).
    useTestPasswordHashParams(false);
    expect(await hashPassword("a long enough passphrase")).toContain(
      `m=${PASSWORD_HASH_PARAMS.memoryKiB},t=${PASSWORD_HASH_PARAMS.iterations},p=${PASSWORD_HASH_PARAMS.parallelism}$`,
    );
  });
});
