/**
 * @module routes/diff-api
 * `POST /api/hosts/:id/diff`: starts a `diff` job of two cached snapshots of the host
 * (restore/diff-request.ts) and answers its id; 503 when the host is offline.
 */
import { Hono } from "hono";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, actorOf, requireRole } from "../auth/actor.js";
import { clientIp } from "../http/render.js";
import { readJson } from "../http/validate.js";
import { DiffBody, requestDiff } from "../restore/diff-request.js";

export function diffApiRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  routes.post("/api/hosts/:id/diff", requireRole("operator"), async (c) => {
    const body = await readJson(c, DiffBody);
    const job = await requestDiff(deps, c.req.param("id"), body, actorOf(c), clientIp(c));
    return c.json({ job_id: job.id }, 201);
  });
  return routes;
}
