/**
 * @module testing/restore-orders
 * Signs restore orders the way the server does (server/src/restore/restore-order.ts), for the
 * restore helper's tests: one key pair per suite, orders with any field changed.
 */

import { generateSigningKeyPair, repositoryDigest, type SigningKeyPair, sign } from "@fleetback/crypto";
import { type RestoreOrder, type RestoreOrderPayload, restoreOrderMessage } from "@fleetback/protocol";
import { ulid } from "ulidx";
import { systemClock } from "../time/clock.js";

export interface OrderSpec {
  repository: string;
  snapshot: string;
  paths: string[];
  /** Absolute target; "/" for in place. */
  target: string;
  hostId?: string;
  jobId?: string;
  expiresAt?: Date;
}

export interface OrderSigner {
  keys: SigningKeyPair;
  hostId: string;
  payload(spec: OrderSpec): RestoreOrderPayload;
  sign(payload: RestoreOrderPayload | string, keys?: SigningKeyPair): RestoreOrder;
  order(spec: OrderSpec): RestoreOrder;
}

export function createOrderSigner(): OrderSigner {
  const keys = generateSigningKeyPair();
  const hostId = ulid();
  const signer: OrderSigner = {
    keys,
    hostId,
    payload: (spec) => ({
      v: 1,
      host_id: spec.hostId ?? hostId,
      job_id: spec.jobId ?? ulid(),
      repository_sha256: repositoryDigest(spec.repository),
      snapshot_id: spec.snapshot,
      in_place: spec.target === "/",
      target_dir: spec.target === "/" ? "$HOME/fleetback-restore/unused/" : spec.target,
      paths: spec.paths,
      expires_at: (spec.expiresAt ?? new Date(systemClock.now().getTime() + 3_600_000)).toISOString(),
    }),
    sign: (payload, by = keys) => {
      const text = typeof payload === "string" ? payload : JSON.stringify(payload);
      return {
        payload: text,
        signature: Buffer.from(sign(by.secretKey, restoreOrderMessage(text))).toString("base64"),
      };
    },
    order: (spec) => signer.sign(signer.payload(spec)),
  };
  return signer;
}
