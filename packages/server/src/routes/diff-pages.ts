/**
 * @module routes/diff-pages
 * The snapshots tab's compare form: starts a `diff` job (restore/diff-request.ts) and sends the
 * browser to its job page, which renders the output (restore/diff-view.ts).
 */
import { Hono } from "hono";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, actorOf, requireRole } from "../auth/actor.js";
import { clientIp, redirectAfterPost } from "../http/render.js";
import { readForm } from "../http/validate.js";
import { DiffBody, requestDiff } from "../restore/diff-request.js";

export function diffPageRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  routes.post("/hosts/:id/diff", requireRole("operator"), async (c) => {
    const body = await readForm(c, DiffBody);
    const job = await requestDiff(deps, c.req.param("id"), body, actorOf(c), clientIp(c));
    return redirectAfterPost(c, `/jobs/${job.id}`);
  });
  return routes;
}
