import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { systemRandom } from "./random.js";
import { open, openJson, openString, SEAL_VERSION, seal, sealJson, sealString } from "./seal.js";

const key = systemRandom(32);
const otherKey = systemRandom(32);
const hostAad = "host:01HZX5K9Q8";

describe("seal / open", () => {
  it("round-trips bytes and strings", () => {
    const bytes = new Uint8Array([0, 1, 2, 255]);
    expect(open(key, seal(key, bytes, hostAad), hostAad)).toEqual({ ok: true, plaintext: bytes });
    expect(openString(key, sealString(key, "pässwörd 🔑", hostAad), hostAad)).toEqual({
      ok: true,
      plaintext: "pässwörd 🔑",
    });
  });

  it("round-trips arbitrary plaintext and AAD", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 512 }), fc.string({ unit: "binary" }), (plaintext, aad) => {
        expect(open(key, seal(key, plaintext, aad), aad)).toEqual({ ok: true, plaintext });
      }),
    );
  });

  it("round-trips JSON and reports non-JSON payloads", () => {
    const value = { url: "rest:http://host/", username: "alice", password: "s3cr3t" };
    expect(openJson(key, sealJson(key, value, hostAad), hostAad)).toEqual({ ok: true, value });
    expect(openJson(key, seal(key, "{not json", hostAad), hostAad)).toEqual({
      ok: false,
      reason: "invalid_json",
    });
    expect(openString(key, seal(key, new Uint8Array([0xff, 0xfe]), hostAad), hostAad)).toEqual({
      ok: false,
      reason: "invalid_utf8",
    });
  });

  it("has the documented layout: version, 24-byte nonce, ciphertext, 16-byte tag", () => {
    const sealed = seal(key, "abc", hostAad);
    expect(sealed[0]).toBe(SEAL_VERSION);
    expect(sealed.length).toBe(1 + 24 + 3 + 16);
  });

  it("fails with another owner's AAD", () => {
    const sealed = sealString(key, "secret", "enrolment:aaaa");
    expect(open(key, sealed, "enrolment:aaab")).toEqual({ ok: false, reason: "authentication_failed" });
    expect(open(key, sealed, "host:aaaa")).toEqual({ ok: false, reason: "authentication_failed" });
    expect(open(key, sealed, "")).toEqual({ ok: false, reason: "authentication_failed" });
  });

  it("fails with another key", () => {
    expect(open(otherKey, seal(key, "secret", hostAad), hostAad)).toEqual({
      ok: false,
      reason: "authentication_failed",
    });
  });

  it("fails when any single bit after the version byte is flipped", () => {
    const sealed = seal(key, "a short secret", hostAad);
    for (let index = 1; index < sealed.length; index++) {
      for (let bit = 0; bit < 8; bit++) {
        const tampered = sealed.slice();
        tampered[index] = (tampered[index] ?? 0) ^ (1 << bit);
        expect(open(key, tampered, hostAad)).toEqual({ ok: false, reason: "authentication_failed" });
      }
    }
  });

  it("uses a fresh nonce for every message", () => {
    const nonces = new Set<string>();
    for (let i = 0; i < 200; i++) {
      nonces.add(Buffer.from(seal(key, "same", hostAad).subarray(1, 25)).toString("hex"));
    }
    expect(nonces.size).toBe(200);
  });

  it("takes the nonce from the injected random source", () => {
    const nonce = new Uint8Array(24).fill(7);
    const sealed = seal(key, "x", hostAad, { random: () => nonce });
    expect(sealed.subarray(1, 25)).toEqual(nonce);
    expect(seal(key, "x", hostAad, { random: () => nonce })).toEqual(sealed);
  });

  it("rejects an unknown version before trying to decrypt", () => {
    const sealed = seal(key, "secret", hostAad);
    sealed[0] = 0x02;
    expect(open(key, sealed, hostAad)).toEqual({ ok: false, reason: "unknown_version" });
    expect(open(key, new Uint8Array([0x00]), hostAad)).toEqual({ ok: false, reason: "unknown_version" });
  });

  it("reports truncated input, including an empty ciphertext", () => {
    const sealed = seal(key, "secret", hostAad);
    expect(open(key, new Uint8Array(), hostAad)).toEqual({ ok: false, reason: "truncated" });
    expect(open(key, sealed.subarray(0, 1 + 24 + 15), hostAad)).toEqual({ ok: false, reason: "truncated" });
    expect(open(key, sealed.subarray(0, sealed.length - 1), hostAad)).toEqual({
      ok: false,
      reason: "authentication_failed",
    });
  });

  it("accepts an empty plaintext", () => {
    expect(openString(key, sealString(key, "", hostAad), hostAad)).toEqual({ ok: true, plaintext: "" });
  });

  it("never throws for arbitrary sealed bytes", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 128 }), (junk) => {
        expect(open(key, junk, hostAad).ok).toBe(false);
      }),
    );
  });

  it("throws for a key that is not 32 bytes (programming error)", () => {
    expect(() => seal(new Uint8Array(16), "x", hostAad)).toThrow(RangeError);
    expect(() => open(new Uint8Array(33), new Uint8Array(64), hostAad)).toThrow(RangeError);
  });
});
