/**
 * @module routes/dashboard-pages
 * The fleet dashboard, the landing page: hosts by state (each number links to the filtered host
 * list at /hosts), the groups that need attention first, the last 24 h of jobs per host, the
 * repositories' growth and the newest open alerts. Its JSON twin is routes/dashboard-api.ts.
 */
import { formatBytes } from "@fleetback/web";
import { Hono } from "hono";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, requireRole } from "../auth/actor.js";
import { type Dashboard, loadDashboard } from "../health/dashboard-view.js";
import { OUTCOME_COLOURS, renderJobTimeline, timelineSummary } from "../health/timeline-chart.js";
import { renderPage } from "../http/render.js";
import { renderLineChart } from "../snapshots/chart.js";

function growthChart(dashboard: Dashboard): string {
  return renderLineChart(
    [
      {
        name: "Stored by all repositories",
        points: dashboard.growth.days.map((point) => ({
          at: new Date(`${point.day}T00:00:00Z`),
          value: point.storedBytes,
        })),
      },
    ],
    { title: "Repository size of the fleet per day (UTC)", format: formatBytes },
  );
}

export function dashboardPageRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  routes.get("/", requireRole("viewer"), async (c) => {
    const dashboard = await loadDashboard(deps);
    const timeZone = deps.config.timeZone;
    return renderPage(c, deps.views, "pages/dashboard.njk", {
      title: "Dashboard",
      dashboard,
      attention: dashboard.attention,
      timelineSvg: renderJobTimeline(dashboard.timeline, { timeZone }),
      timelineRows: timelineSummary(dashboard.timeline),
      outcomes: Object.entries(OUTCOME_COLOURS).map(([status, colour]) => ({ status, colour })),
      growthSvg: dashboard.growth.hostsReporting > 0 ? growthChart(dashboard) : null,
      timeZone,
    });
  });
  return routes;
}
