/**
 * @module Strict base64 decoding. `Buffer.from(text, "base64")` silently skips junk characters and
 * ignores padding, so two different strings could decode to the same key or salt; values that
 * identify something (public keys, PHC hashes) must have exactly one accepted spelling.
 */

const STANDARD_PADDED = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const STANDARD_UNPADDED = /^[A-Za-z0-9+/]*$/;

/** Decodes canonical standard base64 (RFC 4648 §4), or returns undefined. */
export function decodeBase64Strict(text: string, padding: "padded" | "unpadded"): Uint8Array | undefined {
  const shape = padding === "padded" ? STANDARD_PADDED : STANDARD_UNPADDED;
  if (!shape.test(text) || (padding === "unpadded" && text.length % 4 === 1)) {
    return undefined;
  }
  const bytes = Buffer.from(text, "base64");
  // Re-encoding rejects non-zero trailing bits, the last way two spellings could share one value.
  if (encodeBase64(bytes, padding) !== text) {
    return undefined;
  }
  return new Uint8Array(bytes);
}

export function encodeBase64(bytes: Uint8Array, padding: "padded" | "unpadded"): string {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
  return padding === "padded" ? text : text.replace(/=+$/, "");
}

export function encodeBase64Url(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64url");
}
