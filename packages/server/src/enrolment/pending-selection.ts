/**
 * @module enrolment/pending-selection
 * Which waiting hosts a bulk rejection means: named ids or one source network, never both and
 * never neither, so a request never means "all of them" by accident. The page's form and the JSON
 * API accept the same fields.
 */
import { Type } from "typebox";
import { RequestError } from "../errors.js";
import type { PendingSelection } from "./announce.js";

export const PendingId = Type.String({ minLength: 1, maxLength: 64 });
export const NetworkText = Type.String({ minLength: 1, maxLength: 64 });

export function pendingSelection(
  ids: string | string[] | undefined,
  network: string | undefined,
): PendingSelection {
  const list = ids === undefined ? [] : Array.isArray(ids) ? ids : [ids];
  if (list.length > 0 === (network !== undefined)) {
    throw new RequestError(
      "invalid",
      "ids: name the hosts to reject, or give source_network instead (not both)",
    );
  }
  return network !== undefined ? { sourceNetwork: network } : { ids: list };
}
