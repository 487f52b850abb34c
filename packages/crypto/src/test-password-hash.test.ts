// A file of its own: lowering the cost changes this module's state for the rest of the file.
import { describe, expect, it } from "vitest";
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

  it("makes cheap hashes that verify, that production policy flags for rehash, and still verifies production hashes", async () => {
    const strong = await hashPassword("a long enough passphrase");
    expect(strong).toContain(`m=${PASSWORD_HASH_PARAMS.memoryKiB},t=${PASSWORD_HASH_PARAMS.iterations}`);
    useTestPasswordHashParams();
    const cheap = await hashPassword("a long enough passphrase");
    expect(cheap).toMatch(/^\$argon2id\$v=19\$m=64,t=1,p=1\$/);
    expect(await verifyPassword("a long enough passphrase", cheap)).toBe(true);
    expect(await verifyPassword("another passphrase", cheap)).toBe(false);
    expect(needsRehash(cheap)).toBe(true);
    expect(await verifyPassword("a long enough passphrase", strong)).toBe(true);
    useTestPasswordHashParams(false);
    expect(await hashPassword("a long enough passphrase")).toContain(`m=${PASSWORD_HASH_PARAMS.memoryKiB},`);
  });
});
