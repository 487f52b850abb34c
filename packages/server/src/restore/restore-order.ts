/**
 * @module restore/restore-order
 * The server's half of signed restore orders (protocol 13, issue 34): every restore it sends
 * carries an order, signed with a key derived from secret.key (one secret to back up, the same
 * on every replica), whose public half the install script pins in the restore helper's unit.
 * The helper runs no restore without one, so an agent that is taken over can restore only what an
 * operator asked for, from the host's own repository, once.
 */
import {
  deriveSigningKeyPair,
  encodePublicKey,
  repositoryDigest,
  type SigningKeyPair,
  sign,
} from "@fleetback/crypto";
import {
  RESTORE_ORDER_TTL_MS,
  type Restore,
  type RestoreOrder,
  type RestoreOrderPayload,
  restoreOrderMessage,
} from "@fleetback/protocol";
import type { Clock } from "../clock.js";
import type { Keys } from "../deps.js";

const FULL_SNAPSHOT_ID = /^[0-9a-f]{64}$/;
const derived = new WeakMap<Uint8Array, SigningKeyPair>();

export function restoreOrderKey(keys: Keys): SigningKeyPair {
  let pair = derived.get(keys.secret);
  if (pair === undefined) {
    pair = deriveSigningKeyPair(keys.secret, "restore orders");
    derived.set(keys.secret, pair);
  }
  return pair;
}

/** Base64 of the public key, as the install script pins it (FLEETBACK_RESTORE_ORDER_KEY). */
export function restoreOrderPublicKey(keys: Keys): string {
  return encodePublicKey(restoreOrderKey(keys).publicKey);
}

export interface OrderInput {
  hostId: string;
  jobId: string;
  /** The repository URL the host's agent restores from (credentials are never part of the order). */
  repositoryUrl: string;
  restore: Omit<Restore, "order">;
}

/** Undefined when the snapshot id is not a full one: the helper then refuses, as it should. */
export function signRestoreOrder(
  deps: { keys: Keys; clock: Clock },
  input: OrderInput,
): RestoreOrder | undefined {
  if (!FULL_SNAPSHOT_ID.test(input.restore.snapshot_id)) {
    return undefined;
  }
  const order: RestoreOrderPayload = {
    v: 1,
    host_id: input.hostId,
    job_id: input.jobId,
    repository_sha256: repositoryDigest(input.repositoryUrl),
    snapshot_id: input.restore.snapshot_id,
    in_place: input.restore.in_place,
    target_dir: input.restore.target_dir,
    paths: input.restore.paths,
    expires_at: new Date(deps.clock.now().getTime() + RESTORE_ORDER_TTL_MS).toISOString(),
  };
  const payload = JSON.stringify(order);
  const signature = sign(restoreOrderKey(deps.keys).secretKey, restoreOrderMessage(payload));
  return { payload, signature: Buffer.from(signature).toString("base64") };
}
