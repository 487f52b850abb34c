/**
 * @module routes/diff-api
 * `POST /api/hosts/:id/diff`: starts a `diff` job of two cached snapshots of the host
 * (restore/diff-request.ts) and answers its id; 503 when the host is offline.
 */

import type { Hono } from "hono";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, actorOf } from "../auth/actor.js";
import { clientIp } from "../http/render.js";
import { apiGroup, HOST_ID, OFFLINE } from "../openapi/api-route.js";
import { JobStarted } from "../openapi/job-schemas.js";
import { DiffBody, requestDiff } from "../restore/diff-request.js";

export const DIFF_API = apiGroup<AppDeps>({ tag: "Restore" });

DIFF_API.add({
  id: "startDiff",
  method: "post",
  path: "/api/hosts/:id/diff",
  summary: "Compare two snapshots of the host",
  description: "The diff streams into the job's log.",
  access: "operator",
  params: HOST_ID,
  body: DiffBody,
  responses: { 201: { description: "The diff job.", schema: JobStarted } },
  errors: { 503: OFFLINE },
  handler: async (c, { body }, deps) => {
    const job = await requestDiff(deps, c.req.param("id"), body, actorOf(c), clientIp(c));
    return c.json({ job_id: job.id }, 201);
  },
});

export function diffApiRoutes(deps: AppDeps): Hono<AppEnv> {
  return DIFF_API.routes(deps);
}
