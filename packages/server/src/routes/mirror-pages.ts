/**
 * @module routes/mirror-pages
 * The host page's mirror forms: bind or change the mirror's credentials, remove it, copy now.
 * The JSON twins are in routes/mirror-api.ts; what both check is in mirror/mirror-requests.ts.
 */
import { Hono } from "hono";
import { Type } from "typebox";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, auditOf, requireRole } from "../auth/actor.js";
import { putCredentials } from "../fleet/host-requests.js";
import { redirectAfterPost } from "../http/render.js";
import { readForm } from "../http/validate.js";
import { copyNow, removeMirror } from "../mirror/mirror-requests.js";

const MirrorForm = Type.Object(
  {
    url: Type.Optional(Type.String({ maxLength: 2048 })),
    username: Type.Optional(Type.String({ maxLength: 256 })),
    password: Type.Optional(Type.String({ maxLength: 1024 })),
    login_password: Type.Optional(Type.String({ maxLength: 1024 })),
  },
  { additionalProperties: false },
);
const EmptyForm = Type.Object({}, { additionalProperties: false });

export function mirrorPageRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const operator = requireRole("operator");
  const admin = requireRole("admin");

  routes.post("/hosts/:id/mirror", admin, async (c) => {
    const form = await readForm(c, MirrorForm);
    await putCredentials(deps, auditOf(c), c.req.param("id"), "mirror", {
      url: form.url?.trim() || undefined,
      username: form.username?.trim() || undefined,
      password: form.password || undefined,
      login_password: form.login_password || undefined,
    });
    return redirectAfterPost(c, `/hosts/${c.req.param("id")}`);
  });
  routes.post("/hosts/:id/mirror/remove", admin, async (c) => {
    await readForm(c, EmptyForm);
    await removeMirror(deps, auditOf(c), c.req.param("id"));
    return redirectAfterPost(c, `/hosts/${c.req.param("id")}`);
  });
  routes.post("/hosts/:id/mirror/copy", operator, async (c) => {
    await readForm(c, EmptyForm);
    const job = await copyNow(deps, auditOf(c), c.req.param("id"));
    return redirectAfterPost(c, `/jobs/${job.id}`);
  });
  return routes;
}
