/**
 * @module The digest that names a repository in a signed restore order (issue 34): SHA-256 of its
 * location without credentials, so the order, which passes through the agent and the job's
 * records, holds no secret, and the server (from the stored URL) and the restore helper (from
 * the merged URL restic is given) compute the same value.
 */
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import { repositoryLocation } from "./url-credentials.js";

export function repositoryDigest(url: string): string {
  return bytesToHex(sha256(new TextEncoder().encode(repositoryLocation(url))));
}
