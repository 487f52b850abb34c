import { createHash, generateKeyPairSync, sign as nodeSign } from "node:crypto";
import { ed25519 } from "@noble/curves/ed25519.js";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  encodePublicKey,
  fingerprint,
  generateSigningKeyPair,
  parsePublicKey,
  sign,
  verifySignature,
} from "./ed25519.js";

const hex = (text: string) => new Uint8Array(Buffer.from(text, "hex"));
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64");

// RFC 8032 §7.1, test 1.
const rfcPublicKey = hex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
const rfcSignature = hex(
  "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
);

describe("fingerprint", () => {
  it("is SHA256: plus unpadded base64 of the raw key's SHA-256 (known value and node:crypto)", () => {
    expect(fingerprint(rfcPublicKey)).toBe("SHA256:If4x36FUomFia/hUBG/SJxt77UtqvkWqWId+9H+XIbk");
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), (key) => {
        const expected = createHash("sha256").update(key).digest("base64").replace(/=+$/, "");
        expect(fingerprint(key)).toBe(`SHA256:${expected}`);
      }),
    );
  });

  it("throws for a key that is not 32 bytes (programming error)", () => {
    expect(() => fingerprint(new Uint8Array(31))).toThrow(RangeError);
  });
});

describe("parsePublicKey", () => {
  it("accepts a real key in canonical padded base64", () => {
    const { publicKey } = generateSigningKeyPair();
    expect(parsePublicKey(encodePublicKey(publicKey))).toEqual({ ok: true, key: publicKey });
    expect(parsePublicKey("11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=")).toEqual({
      ok: true,
      key: rfcPublicKey,
    });
  });

  it.each([
    ["", "wrong_length"],
    [b64(new Uint8Array(31).fill(1)), "wrong_length"],
    [b64(new Uint8Array(33).fill(1)), "wrong_length"],
    [b64(new Uint8Array(64).fill(1)), "wrong_length"],
    ["11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo", "not_base64"],
    ["11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo=", "not_base64"],
    [" 11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=", "not_base64"],
    ["11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=\n", "not_base64"],
    ["11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURp=", "not_base64"],
    ["11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo==", "not_base64"],
    ["not base64 at all!", "not_base64"],
  ])("rejects %j as %s", (input, reason) => {
    expect(parsePublicKey(input)).toEqual({ ok: false, reason });
  });

  it("rejects encodings that are not a curve point or not canonical", () => {
    const noPoint = new Uint8Array(32);
    noPoint[0] = 2;
    expect(parsePublicKey(b64(noPoint))).toEqual({ ok: false, reason: "invalid_point" });
    const yEqualsP = hex("edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f");
    expect(parsePublicKey(b64(yEqualsP))).toEqual({ ok: false, reason: "invalid_point" });
  });

  it.each([
    "0100000000000000000000000000000000000000000000000000000000000000",
    "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    "0000000000000000000000000000000000000000000000000000000000000000",
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
    "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
  ])("rejects the small-order point %s", (encoding) => {
    expect(parsePublicKey(b64(hex(encoding)))).toEqual({ ok: false, reason: "weak_point" });
  });

  it("rejects a mixed-order point (honest key plus a torsion component)", () => {
    const torsion = ed25519.Point.fromBytes(
      hex("ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"),
    );
    const mixed = ed25519.Point.fromBytes(rfcPublicKey).add(torsion).toBytes();
    expect(parsePublicKey(b64(mixed))).toEqual({ ok: false, reason: "weak_point" });
  });

  it("never throws for arbitrary strings", () => {
    fc.assert(
      fc.property(fc.string(), (input) => {
        expect(typeof parsePublicKey(input).ok).toBe("boolean");
      }),
    );
  });
});

describe("sign / verifySignature", () => {
  it("verifies the RFC 8032 test vector", () => {
    expect(verifySignature(rfcPublicKey, new Uint8Array(), rfcSignature)).toBe(true);
    expect(verifySignature(rfcPublicKey, new Uint8Array([0]), rfcSignature)).toBe(false);
  });

  it("round-trips and rejects another message, key or a tampered signature", () => {
    const { publicKey, secretKey } = generateSigningKeyPair();
    const other = generateSigningKeyPair();
    const message = "fleetback-claim:01HZX5K9Q8:1700000000";
    const signature = sign(secretKey, message);
    expect(signature).toHaveLength(64);
    expect(verifySignature(publicKey, message, signature)).toBe(true);
    expect(verifySignature(publicKey, `${message}1`, signature)).toBe(false);
    expect(verifySignature(other.publicKey, message, signature)).toBe(false);
    const tampered = signature.slice();
    tampered[10] = (tampered[10] ?? 0) ^ 1;
    expect(verifySignature(publicKey, message, tampered)).toBe(false);
  });

  it("verifies signatures made by node:crypto", () => {
    const pair = generateKeyPairSync("ed25519");
    const jwk = pair.publicKey.export({ format: "jwk" });
    const publicKey = new Uint8Array(Buffer.from(jwk.x ?? "", "base64url"));
    const message = Buffer.from("bundle bytes");
    const signature = new Uint8Array(nodeSign(null, message, pair.privateKey));
    expect(verifySignature(publicKey, message, signature)).toBe(true);
  });

  it("returns false rather than throwing for malformed inputs", () => {
    const { publicKey } = generateSigningKeyPair();
    expect(verifySignature(publicKey, "m", new Uint8Array(3))).toBe(false);
    expect(verifySignature(new Uint8Array(5), "m", new Uint8Array(64))).toBe(false);
    expect(verifySignature(new Uint8Array(32), "m", new Uint8Array(64))).toBe(false);
  });
});
