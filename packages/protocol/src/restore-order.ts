/**
 * @module restore-order
 * A restore order (protocol 13, issue 34): what one restore may do, signed by the server's
 * restore-order key (Ed25519), whose public half the installer pins in the restore helper's unit,
 * where the agent cannot write. The helper runs a restore only when an order verifies, has not
 * expired, was not used before, and the request matches it: the repository (by hash, so the
 * order carries no credential), the full snapshot id, the target and the paths. A compromised
 * agent can still ask for a restore, but only one the server ordered, from the host's own
 * repository, once.
 *
 * `payload` is the JSON text exactly as signed; the signature covers `RESTORE_ORDER_CONTEXT`
 * followed by that text, so the key's signatures mean nothing anywhere else.
 */
import { type Static, Type } from "typebox";
import { MAX_FRAME_BYTES } from "./constants.js";
import {
  ED25519_SIGNATURE_BASE64_PATTERN,
  RESTORE_TARGET_PATTERN,
  RFC3339_UTC_PATTERN,
  SHA256_HEX_PATTERN,
  SNAPSHOT_PATH_PATTERN,
  ULID_PATTERN,
} from "./formats.js";

export const RESTORE_ORDER_CONTEXT = "fleetback-restore-order-v1\n";

export const RestoreOrder = Type.Object({
  payload: Type.String({ minLength: 2, maxLength: MAX_FRAME_BYTES, description: "the signed JSON text" }),
  signature: Type.String({
    pattern: ED25519_SIGNATURE_BASE64_PATTERN,
    description: "base64 Ed25519 signature",
  }),
});
export type RestoreOrder = Static<typeof RestoreOrder>;

// common.ts takes RestoreOrder from here, so these few are spelt out rather than imported back.
const Sha256Hex = Type.String({ pattern: SHA256_HEX_PATTERN, description: "64 hex digits" });
const Ulid = Type.String({ pattern: ULID_PATTERN, description: "ULID" });
const Rfc3339 = Type.String({ pattern: RFC3339_UTC_PATTERN, description: "RFC 3339 UTC timestamp" });
const SnapshotPath = Type.String({ pattern: SNAPSHOT_PATH_PATTERN, description: "absolute path" });

export const RestoreOrderPayload = Type.Object(
  {
    v: Type.Literal(1),
    host_id: Ulid,
    job_id: Ulid,
    /** SHA-256 of the repository string the agent hands restic (RESTIC_REPOSITORY), as hex. */
    repository_sha256: Sha256Hex,
    /** The full id: a short one could be matched by a snapshot an attacker wrote. */
    snapshot_id: Sha256Hex,
    in_place: Type.Boolean(),
    target_dir: Type.String({ pattern: RESTORE_TARGET_PATTERN }),
    paths: Type.Array(SnapshotPath, { minItems: 1 }),
    expires_at: Rfc3339,
  },
  { additionalProperties: false },
);
export type RestoreOrderPayload = Static<typeof RestoreOrderPayload>;

/** The bytes the signature covers. */
export function restoreOrderMessage(payload: string): Uint8Array {
  return new TextEncoder().encode(`${RESTORE_ORDER_CONTEXT}${payload}`);
}
