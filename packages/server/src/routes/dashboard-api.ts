/**
 * @module routes/dashboard-api
 * GET /api/dashboard: the dashboard's numbers for scripts (hosts by state, groups by freshness,
 * the groups needing attention, jobs of the last 24 h, repository size per day, open alerts),
 * from the same object the page renders (dashboard/dashboard-view.ts).
 */
import type { Hono } from "hono";
import type { AppDeps } from "../app-deps.js";
import type { AppEnv } from "../auth/actor.js";
import { dashboardJson, loadDashboard } from "../dashboard/dashboard-view.js";
import { Dashboard } from "../openapi/alert-schemas.js";
import { apiGroup } from "../openapi/api-route.js";

export const DASHBOARD_API = apiGroup<AppDeps>({ tag: "Dashboard" });

DASHBOARD_API.add({
  id: "getDashboard",
  method: "get",
  path: "/api/dashboard",
  summary: "The dashboard's numbers",
  description:
    "Hosts by state, groups by freshness, the groups needing attention, jobs of the last 24 h, repository size per day and the newest open alerts, as the dashboard page shows them.",
  access: "viewer",
  responses: { 200: { description: "The dashboard.", schema: Dashboard } },
  handler: async (c, _input, deps) => {
    return c.json(dashboardJson(await loadDashboard(deps)));
  },
});

export function dashboardApiRoutes(deps: AppDeps): Hono<AppEnv> {
  return DASHBOARD_API.routes(deps);
}
