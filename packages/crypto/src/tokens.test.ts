import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  constantTimeEqual,
  generateRepositoryPassword,
  hashToken,
  randomToken,
  TOKEN_PREFIXES,
} from "./tokens.js";

const counting = (n: number) => new Uint8Array(n).map((_, i) => i);

describe("randomToken", () => {
  it("is the prefix, an underscore and 43 base64url characters", () => {
    for (const prefix of Object.values(TOKEN_PREFIXES)) {
      expect(randomToken(prefix)).toMatch(new RegExp(`^${prefix}_[A-Za-z0-9_-]{43}$`));
    }
  });

  it("is deterministic with an injected random source", () => {
    expect(randomToken("fbe", { random: counting, bytes: 16 })).toBe(
      `fbe_${Buffer.from(counting(16)).toString("base64url")}`,
    );
  });

  it("differs on every call", () => {
    const tokens = new Set(Array.from({ length: 1000 }, () => randomToken("fba")));
    expect(tokens.size).toBe(1000);
  });

  it("refuses fewer than 16 random bytes", () => {
    expect(() => randomToken("fbs", { bytes: 8 })).toThrow(RangeError);
    expect(() => randomToken("fbs", { random: () => new Uint8Array(3) })).toThrow(RangeError);
  });

  it("uses distinct prefixes for distinct kinds", () => {
    const prefixes = Object.values(TOKEN_PREFIXES);
    expect(new Set(prefixes).size).toBe(prefixes.length);
  });
});

describe("hashToken", () => {
  it("is the lowercase hex SHA-256 of the token (checked against node:crypto)", () => {
    expect(hashToken("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    fc.assert(
      fc.property(fc.string({ unit: "grapheme" }), (token) => {
        expect(hashToken(token)).toBe(createHash("sha256").update(token, "utf8").digest("hex"));
      }),
    );
  });
});

describe("generateRepositoryPassword", () => {
  it("is 24 random bytes as 32 URL-safe characters without padding", () => {
    const password = generateRepositoryPassword();
    expect(password).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(Buffer.from(password, "base64url")).toHaveLength(24);
    expect(encodeURIComponent(password)).toBe(password);
    expect(generateRepositoryPassword({ random: counting })).toBe(
      Buffer.from(counting(24)).toString("base64url"),
    );
    expect(generateRepositoryPassword()).not.toBe(password);
  });
});

describe("constantTimeEqual", () => {
  it("compares strings and bytes by content, whatever their lengths", () => {
    expect(constantTimeEqual("fbe_abc", "fbe_abc")).toBe(true);
    expect(constantTimeEqual("fbe_abc", "fbe_abd")).toBe(false);
    expect(constantTimeEqual("short", "a much longer string")).toBe(false);
    expect(constantTimeEqual("", "")).toBe(true);
    expect(constantTimeEqual(new Uint8Array([1, 2]), new Uint8Array([1, 2]))).toBe(true);
    expect(constantTimeEqual(new Uint8Array([1, 2]), new Uint8Array([1, 2, 0]))).toBe(false);
    expect(constantTimeEqual("AB", new Uint8Array([65, 66]))).toBe(true);
  });

  it("agrees with === on arbitrary strings", () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (a, b) => {
        expect(constantTimeEqual(a, b)).toBe(a === b);
        expect(constantTimeEqual(a, a)).toBe(true);
      }),
    );
  });
});
