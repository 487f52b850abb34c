/**
 * @module update/artefact-check
 * The two checks a downloaded artefact must pass before it may replace the running agent: the
 * SHA-256 the server announced (catches truncation and mix-ups) and the Ed25519 signature by the
 * pinned release key over the exact bytes (the only check a compromised server cannot forge).
 */
import { readFile } from "node:fs/promises";
import { verifySignature } from "@fleetback/crypto";

const SIGNATURE_BYTES = 64;

export interface ArtefactClaim {
  sha256: string;
  /** Base64 Ed25519 signature over the artefact's bytes. */
  signature: string;
}

export async function checkArtefact(
  path: string,
  actualSha256: string,
  claim: ArtefactClaim,
  releaseKey: Uint8Array,
): Promise<string | undefined> {
  if (actualSha256 !== claim.sha256) {
    return `SHA-256 mismatch: the download has ${actualSha256}, the server announced ${claim.sha256}`;
  }
  const signature = Buffer.from(claim.signature, "base64");
  if (signature.length !== SIGNATURE_BYTES || signature.toString("base64") !== claim.signature) {
    return "the signature is not base64 of 64 bytes";
  }
  // Ed25519 signs the whole message at once; the cap on downloads bounds this read.
  if (!verifySignature(releaseKey, await readFile(path), signature)) {
    return "the signature does not verify against the pinned release key";
  }
  return undefined;
}
