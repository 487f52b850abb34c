/**
 * @module restore-helper/order-check
 * Whether a request to the restore helper is a restore the server ordered (protocol 13, issue 34).
 * The agent builds restic's argv, but a compromised agent could build any; the order, signed with
 * the key pinned in the helper's unit, is what the helper believes. The request must restore the
 * ordered snapshot (full id) from the ordered repository (its location's digest: the credentials
 * in it are the agent's business) to the ordered target, and include nothing but the ordered paths
 * or paths inside them (the agent restores around its own directories: a subset is fine).
 */
import { normalize } from "node:path";
import { repositoryDigest, verifySignature } from "@fleetback/crypto";
import { type RestoreOrder, RestoreOrderPayload, restoreOrderMessage } from "@fleetback/protocol";
import { Check } from "typebox/value";
import type { RestorePlan } from "./helper-request.js";
import { expandRestoreTarget } from "./restore-target.js";

export type OrderCheck = { ok: true; order: RestoreOrderPayload } | { ok: false; error: string };

export interface OrderCheckInput {
  order: RestoreOrder | undefined;
  /** The pinned public key (FLEETBACK_RESTORE_ORDER_KEY); undefined when the unit pins none. */
  key: Uint8Array | undefined;
  now: Date;
  plan: Pick<RestorePlan, "snapshot" | "target" | "includes">;
  /** RESTIC_REPOSITORY of the request. */
  repository: string;
  /** The helper's own HOME, to expand an ordered `$HOME/...` target as the agent does. */
  home: string | undefined;
}

const trimmed = (path: string) => normalize(path).replace(/(.)\/$/, "$1");
const inside = (path: string, dir: string) => dir === "/" || path === dir || path.startsWith(`${dir}/`);

export function checkOrder(input: OrderCheckInput): OrderCheck {
  if (input.key === undefined) {
    return {
      ok: false,
      error:
        "this restore helper has no restore-order key pinned (FLEETBACK_RESTORE_ORDER_KEY in its unit): re-run the installer from the server to pin it",
    };
  }
  if (input.order === undefined) {
    return {
      ok: false,
      error:
        "the request carries no restore order signed by the server: the server or the agent is older than protocol 13; update both",
    };
  }
  const signature = Buffer.from(input.order.signature, "base64");
  if (!verifySignature(input.key, restoreOrderMessage(input.order.payload), signature)) {
    return { ok: false, error: "the restore order's signature does not verify against the pinned key" };
  }
  let order: unknown;
  try {
    order = JSON.parse(input.order.payload);
  } catch {
    order = undefined;
  }
  if (!Check(RestoreOrderPayload, order)) {
    return { ok: false, error: "the restore order is signed but is no order this helper understands" };
  }
  if (Date.parse(order.expires_at) <= input.now.getTime()) {
    return { ok: false, error: `the restore order of job ${order.job_id} expired at ${order.expires_at}` };
  }
  if (repositoryDigest(input.repository) !== order.repository_sha256) {
    return { ok: false, error: "the request reads another repository than the order names" };
  }
  if (input.plan.snapshot !== order.snapshot_id) {
    return { ok: false, error: "the request restores another snapshot than the order names" };
  }
  const target = orderedTarget(order, input.home);
  if (!target.ok) {
    return target;
  }
  if (trimmed(input.plan.target) !== target.dir) {
    return {
      ok: false,
      error: `the request restores to ${input.plan.target}, but the order names ${order.in_place ? "/ (in place)" : target.dir}`,
    };
  }
  const ordered = order.paths.map(trimmed);
  const stray = input.plan.includes.find((path) => !ordered.some((dir) => inside(trimmed(path), dir)));
  if (stray !== undefined) {
    return { ok: false, error: `the request restores ${stray}, which the order does not name` };
  }
  return { ok: true, order };
}

function orderedTarget(
  order: RestoreOrderPayload,
  home: string | undefined,
): { ok: true; dir: string } | { ok: false; error: string } {
  if (order.in_place) {
    return { ok: true, dir: "/" };
  }
  const expanded = expandRestoreTarget(order.target_dir, home);
  return expanded.ok ? { ok: true, dir: trimmed(expanded.dir) } : { ok: false, error: expanded.error };
}
