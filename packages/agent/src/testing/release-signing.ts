/**
 * @module testing/release-signing
 * A release key pair and signed artefacts, as the server's release signing would make them.
 */
import { createHash } from "node:crypto";
import { encodePublicKey, generateSigningKeyPair, sign } from "@fleetback/crypto";

export interface ReleaseSigner {
  publicKey: Uint8Array;
  publicKeyBase64: string;
  sign(content: Buffer): string;
}

export function createReleaseSigner(): ReleaseSigner {
  const pair = generateSigningKeyPair();
  return {
    publicKey: pair.publicKey,
    publicKeyBase64: encodePublicKey(pair.publicKey),
    sign: (content) => Buffer.from(sign(pair.secretKey, content)).toString("base64"),
  };
}

export function sha256Hex(content: string | Buffer): string {
  return createHash("sha256").update(content).digest("hex");
}
