/**
 * @module install/signed-file
 * Reads a stored agent artefact back and checks it against its metadata: size, SHA-256, and the
 * release key's signature. Ed25519 over a large file costs real event-loop time, so a (SHA-256,
 * signature) pair that verified once is not verified again in this process: a matching SHA-256
 * means the same bytes.
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { basename } from "node:path";
import { verifySignature } from "@fleetback/crypto";

export interface SignedFileInfo {
  sha256: string;
  size: number;
  /** Base64 Ed25519 signature of the file's bytes. */
  signature: string;
}

export type SignedFileRead = { ok: true; body: Buffer } | { ok: false; problem: string };

export async function readSignedFile(options: {
  path: string;
  /** Names the metadata file in problems. */
  metaName: string;
  info: SignedFileInfo;
  publicKey: Uint8Array;
  /** `sha256:signature` pairs already verified. */
  verified: Set<string>;
}): Promise<SignedFileRead> {
  const { path, info } = options;
  const name = basename(path);
  let body: Buffer;
  try {
    body = await readFile(path);
  } catch (error) {
    return {
      ok: false,
      problem: `cannot read ${name}: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  const sha256 = createHash("sha256").update(body).digest("hex");
  if (sha256 !== info.sha256 || body.byteLength !== info.size) {
    return {
      ok: false,
      problem: `${name} has SHA-256 ${sha256} (${body.byteLength} bytes); ${options.metaName} says ${info.sha256} (${info.size} bytes)`,
    };
  }
  const key = `${info.sha256}:${info.signature}`;
  if (!options.verified.has(key)) {
    if (!verifySignature(options.publicKey, body, Buffer.from(info.signature, "base64"))) {
      return { ok: false, problem: "signature does not verify with the current release key" };
    }
    options.verified.add(key);
  }
  return { ok: true, body };
}
