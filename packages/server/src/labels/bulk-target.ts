/**
 * @module labels/bulk-target
 * Which hosts a bulk label change is for, as the API body and the host list's form give it:
 * a selector or a list of ids, never both. A blank selector is refused, not read as "every host".
 */
import { invalid } from "../errors.js";
import type { BulkTarget } from "./host-labels.js";
import { selectorFromRequest } from "./selector.js";

export function bulkTarget(body: {
  selector?: string | undefined;
  host_ids?: string[] | undefined;
}): BulkTarget {
  if ((body.selector === undefined) === (body.host_ids === undefined)) {
    throw invalid("selector: give either selector or host_ids", [
      { field: "selector", message: "give either selector or host_ids" },
    ]);
  }
  if (body.host_ids !== undefined) {
    return { hostIds: [...new Set(body.host_ids)] };
  }
  const selector = selectorFromRequest(body.selector ?? "", "selector");
  // A blank selector matches every host: too easy to send by mistake for a bulk change.
  if (selector.length === 0) {
    throw invalid("selector: is empty and would match every host", [
      { field: "selector", message: "is empty and would match every host" },
    ]);
  }
  return { selector };
}
