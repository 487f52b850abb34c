/**
 * @module update/artefact-check
 * The two checks a downloaded artefact must pass before it may replace the running agent: the
 * SHA-256 the server announced (catches truncation and mix-ups) and the Ed25519 signature by the
 * pinned release key over the exact bytes (the only check a compromised server cannot forge). The
 * launcher repeats the signature check on every start (launcher.ts).
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
  // Ed25519 signs the whole message at once; the cap on downloads bounds this read.
  return signatureProblem(await readFile(path), claim.signature, releaseKey);
}

/** Why `signature` (base64) is not the release key's over `bytes`; undefined when it is. */
export function signatureProblem(
  bytes: Uint8Array,
  signature: string,
  releaseKey: Uint8Array,
): string | undefined {
  const decoded = Buffer.from(signature, "base64");
  if (decoded.length !== SIGNATURE_BYTES || decoded.toString("base64") !== signature) {
    return "the signature is not base64 of 64 bytes";
  }
  if (!verifySignature(releaseKey, bytes, decoded)) {
    return "the signature does not verify against the pinned release key";
  }
  return undefined;
}
