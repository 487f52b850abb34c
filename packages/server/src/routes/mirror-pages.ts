/**
 * @module routes/mirror-pages
 * The host page's mirror forms: bind or change the mirror's credentials, remove it, copy now.
 * The JSON twins are in routes/mirror-api.ts; what both check is in mirror/mirror-requests.ts.
 */
import { Hono } from "hono";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, auditOf, requireRole } from "../auth/actor.js";
import { idButton } from "../auth/id-button.js";
import { putCredentials } from "../fleet/host-requests.js";
import { readCredentialForm } from "../hosts/credential-form.js";
import { redirectAfterPost } from "../http/render.js";
import { EmptyForm, readForm } from "../http/validate.js";
import { copyNow, removeMirror } from "../mirror/mirror-requests.js";

export function mirrorPageRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const operator = requireRole("operator");
  const admin = requireRole("admin");

  routes.post("/hosts/:id/mirror", admin, async (c) => {
    await putCredentials(deps, auditOf(c), c.req.param("id"), "mirror", await readCredentialForm(c));
    return redirectAfterPost(c, `/hosts/${c.req.param("id")}`);
  });
  routes.post(
    "/hosts/:id/mirror/remove",
    admin,
    idButton(deps, removeMirror, (id) => `/hosts/${id}`),
  );
  routes.post("/hosts/:id/mirror/copy", operator, async (c) => {
    await readForm(c, EmptyForm);
    const job = await copyNow(deps, auditOf(c), c.req.param("id"));
    return redirectAfterPost(c, `/jobs/${job.id}`);
  });
  return routes;
}
