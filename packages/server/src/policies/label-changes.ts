/**
 * @module policies/label-changes
 * Labels changed by a request, JSON or form. Policies pick their hosts by label
 * (policies/policy-apply.ts), so a label change moves hosts under other policies: each change
 * brings them in line inside its own transaction and pushes their schedule sets once committed.
 */

import type { AppDeps } from "../app-deps.js";
import type { AuditContext } from "../audit/audit.js";
import {
  type BulkResult,
  type BulkTarget,
  bulkChangeLabels,
  changeHostLabels,
  type LabelEdit,
} from "../labels/host-labels.js";
import type { Labels } from "../labels/label-rules.js";
import { followPolicies } from "./policy-apply.js";

/** The edit a body (PATCH or bulk, JSON or form) asks for; a part left out changes nothing. */
export function labelEditOf(body: { set?: Labels; remove?: string[] }): LabelEdit {
  return { set: body.set ?? {}, remove: body.remove ?? [] };
}

/** One host's labels replaced or edited; its labels now. */
export async function changeLabelsFollowingPolicies(
  deps: AppDeps,
  audit: AuditContext,
  hostId: string,
  change: { replace: Labels } | LabelEdit,
): Promise<Labels> {
  const follow = followPolicies(deps);
  const labels = await changeHostLabels(deps, audit, hostId, change, follow.onChanged);
  await follow.push();
  return labels;
}

/** The edit made to every host of the target, all or nothing. */
export async function bulkChangeLabelsFollowingPolicies(
  deps: AppDeps,
  audit: AuditContext,
  target: BulkTarget,
  edit: LabelEdit,
): Promise<BulkResult> {
  const follow = followPolicies(deps);
  const result = await bulkChangeLabels(deps, audit, target, edit, follow.onChanged);
  await follow.push();
  return result;
}
