/**
 * @module routes/mirror-api
 * A host's mirror as JSON (issue 18, 3-2-1): bind or change its credentials and remove it
 * (admins: the mirror is where the second copy of every backup lives), and copy now (operators).
 * Its state is part of GET /api/hosts/{id} (`mirror`). The page forms are in routes/mirror-pages.ts.
 */
import { Hono } from "hono";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, auditOf, requireRole } from "../auth/actor.js";
import { putCredentials } from "../fleet/host-requests.js";
import { CredentialBody } from "../hosts/credential-body.js";
import { readJson } from "../http/validate.js";
import { copyNow, removeMirror } from "../mirror/mirror-requests.js";

export function mirrorApiRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const operator = requireRole("operator");
  const admin = requireRole("admin");

  routes.put("/api/hosts/:id/mirror-credentials", admin, async (c) => {
    const body = await readJson(c, CredentialBody);
    await putCredentials(deps, auditOf(c), c.req.param("id"), "mirror", body);
    return c.json({ ok: true });
  });
  routes.delete("/api/hosts/:id/mirror-credentials", admin, async (c) => {
    await removeMirror(deps, auditOf(c), c.req.param("id"));
    return c.body(null, 204);
  });
  routes.post("/api/hosts/:id/mirror/copy", operator, async (c) => {
    const job = await copyNow(deps, auditOf(c), c.req.param("id"));
    return c.json({ job_id: job.id, status: job.status }, 201);
  });
  return routes;
}
