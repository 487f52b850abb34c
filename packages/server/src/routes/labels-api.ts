/**
 * @module routes/labels-api
 * Hosts' labels over JSON (issue 37): read by viewers; set, merged and changed in bulk by
 * operators and admins, each defined once with what the OpenAPI document says of it. The host
 * page's form is in routes/hosts-pages.ts, the host list's bulk form in routes/fleet-pages.ts.
 */
import type { Context, Hono } from "hono";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, auditOf } from "../auth/actor.js";
import { bulkTarget } from "../labels/bulk-target.js";
import { hostLabels } from "../labels/host-labels.js";
import {
  BulkLabelsAnswer,
  BulkLabelsBody,
  LabelsAnswer,
  PatchLabelsBody,
  PutLabelsBody,
} from "../labels/label-bodies.js";
import { apiGroup, HOST_ID } from "../openapi/api-route.js";
import {
  bulkChangeLabelsFollowingPolicies,
  changeLabelsFollowingPolicies,
  labelEditOf,
} from "../policies/label-changes.js";

const RULES =
  "A key is an optional lower-case DNS prefix and `/`, then 1 to 63 characters of letters, digits, `.`, `_` and `-` starting and ending with a letter or digit; a value is empty or the same; at most 32 labels per host. An error names the field and the label.";

/** The host of the path's labels changed as `change` says, answered as they are now. */
async function answerChanged(
  c: Context<AppEnv, `${string}/:id${string}`>,
  deps: AppDeps,
  change: Parameters<typeof changeLabelsFollowingPolicies>[3],
) {
  const labels = await changeLabelsFollowingPolicies(deps, auditOf(c), c.req.param("id"), change);
  return c.json({ labels });
}

export const LABEL_API = apiGroup<AppDeps>({ tag: "Hosts" });

LABEL_API.add({
  id: "getHostLabels",
  method: "get",
  path: "/api/hosts/:id/labels",
  summary: "A host's labels",
  access: "viewer",
  params: HOST_ID,
  responses: { 200: { description: "The host's labels, key to value.", schema: LabelsAnswer } },
  handler: async (c, _input, deps) => c.json({ labels: await hostLabels(deps.db, c.req.param("id")) }),
});

LABEL_API.add({
  id: "putHostLabels",
  method: "put",
  path: "/api/hosts/:id/labels",
  summary: "Replace a host's labels",
  description: `${RULES} Audited as host.labels with what was set and removed.`,
  access: "operator",
  params: HOST_ID,
  body: PutLabelsBody,
  responses: { 200: { description: "The host's labels now.", schema: LabelsAnswer } },
  handler: async (c, { body }, deps) => {
    return answerChanged(c, deps, { replace: body.labels });
  },
});

LABEL_API.add({
  id: "patchHostLabels",
  method: "patch",
  path: "/api/hosts/:id/labels",
  summary: "Set and remove some of a host's labels",
  description: `\`set\` adds or overwrites, \`remove\` drops keys (a key may not be in both). ${RULES} Audited as host.labels.`,
  access: "operator",
  params: HOST_ID,
  body: PatchLabelsBody,
  responses: { 200: { description: "The host's labels now.", schema: LabelsAnswer } },
  handler: async (c, { body }, deps) => {
    return answerChanged(c, deps, labelEditOf(body));
  },
});

LABEL_API.add({
  id: "bulkHostLabels",
  method: "post",
  path: "/api/hosts/labels",
  summary: "Set and remove labels of many hosts at once",
  description: `The hosts are a label selector (\`env=prod,role in (db,web),!staging\`; not empty) or up to 1000 ids, exactly one of the two. All or nothing: if any host would end up with more than 32 labels, nothing changes. ${RULES} One audit entry (hosts.labels_bulk) with the counts, not one per host.`,
  access: "operator",
  body: BulkLabelsBody,
  responses: { 200: { description: "How many hosts matched and changed.", schema: BulkLabelsAnswer } },
  handler: async (c, { body }, deps) => {
    const result = await bulkChangeLabelsFollowingPolicies(
      deps,
      auditOf(c),
      bulkTarget(body),
      labelEditOf(body),
    );
    return c.json({ matched: result.matched, changed: result.changed, not_found: result.notFound });
  },
});

export function labelApiRoutes(deps: AppDeps): Hono<AppEnv> {
  return LABEL_API.routes(deps);
}
