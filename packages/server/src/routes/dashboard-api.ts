/**
 * @module routes/dashboard-api
 * GET /api/dashboard: the dashboard's numbers for scripts (hosts by state, groups by freshness,
 * the groups needing attention, jobs of the last 24 h, repository size per day, open alerts),
 * from the same object the page renders (health/dashboard-view.ts).
 */
import { Hono } from "hono";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, requireRole } from "../auth/actor.js";
import { dashboardJson, loadDashboard } from "../health/dashboard-view.js";

export function dashboardApiRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  routes.get("/api/dashboard", requireRole("viewer"), async (c) => {
    return c.json(dashboardJson(await loadDashboard(deps)));
  });
  return routes;
}
