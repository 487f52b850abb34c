/**
 * @module routes/labels-api
 * Hosts' labels over JSON (issue 37): read by viewers; set, merged and changed in bulk by
 * operators and admins. The host page's form is in routes/labels-pages.ts.
 */
import { Hono } from "hono";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, auditOf, requireRole } from "../auth/actor.js";
import { invalid } from "../errors.js";
import { readJson } from "../http/validate.js";
import { type BulkTarget, bulkChangeLabels, changeHostLabels, hostLabels } from "../labels/host-labels.js";
import { BulkLabelsBody, PatchLabelsBody, PutLabelsBody } from "../labels/label-bodies.js";
import { selectorFromRequest } from "../labels/selector.js";

function bulkTarget(body: { selector?: string | undefined; host_ids?: string[] | undefined }): BulkTarget {
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

export function labelApiRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const viewer = requireRole("viewer");
  const operator = requireRole("operator");

  routes.post("/api/hosts/labels", operator, async (c) => {
    const body = await readJson(c, BulkLabelsBody);
    const result = await bulkChangeLabels(deps, auditOf(c), bulkTarget(body), {
      set: body.set ?? {},
      remove: body.remove ?? [],
    });
    return c.json({ matched: result.matched, changed: result.changed, not_found: result.notFound });
  });
  routes.get("/api/hosts/:id/labels", viewer, async (c) => {
    return c.json({ labels: await hostLabels(deps.db, c.req.param("id")) });
  });
  routes.put("/api/hosts/:id/labels", operator, async (c) => {
    const body = await readJson(c, PutLabelsBody);
    const labels = await changeHostLabels(deps, auditOf(c), c.req.param("id"), { replace: body.labels });
    return c.json({ labels });
  });
  routes.patch("/api/hosts/:id/labels", operator, async (c) => {
    const body = await readJson(c, PatchLabelsBody);
    const labels = await changeHostLabels(deps, auditOf(c), c.req.param("id"), {
      set: body.set ?? {},
      remove: body.remove ?? [],
    });
    return c.json({ labels });
  });
  return routes;
}
