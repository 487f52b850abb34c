/**
 * @module routes/digest-api
 * The fleet digest as it would be sent now (issue 39.1): what a daily or weekly digest says,
 * counted over the last day or week. Viewers may read it: it names no more than the host list.
 */
import type { Hono } from "hono";
import type { AppDeps } from "../app-deps.js";
import type { AppEnv } from "../auth/actor.js";
import { buildDigest } from "../digest/digest-content.js";
import { DigestQuery, previewPeriod } from "../digest/digest-query.js";
import { digestText } from "../digest/digest-text.js";
import { apiGroup } from "../openapi/api-route.js";
import { DigestJson } from "../openapi/digest-schemas.js";

export const DIGEST_API = apiGroup<AppDeps>({ tag: "Reports" });

DIGEST_API.add({
  id: "previewDigest",
  method: "get",
  path: "/api/reports/digest",
  summary: "The fleet digest as it would read now",
  description:
    "Counts of hosts by state with the first few by name, the drills and the repositories' growth over the last day (or week), and the verdict in one line.",
  access: "viewer",
  query: DigestQuery,
  responses: { 200: { description: "The digest, as data and as text.", schema: DigestJson } },
  handler: async (c, { query }, deps) => {
    const digest = await buildDigest(deps, undefined, previewPeriod(query).periodMs);
    const { title, text } = digestText(digest, `${deps.config.baseUrl}/hosts`);
    return c.json({ digest, title, text });
  },
});

export function digestApiRoutes(deps: AppDeps): Hono<AppEnv> {
  return DIGEST_API.routes(deps);
}
