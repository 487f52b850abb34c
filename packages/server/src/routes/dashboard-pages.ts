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
import { type Dashboard, loadDashboard } from "../dashboard/dashboard-view.js";
import { OUTCOME_COLOURS, renderJobTimeline, timelineSummary } from "../dashboard/timeline-chart.js";
import { renderPage } from "../http/render.js";
import { renderLineChart } from "../snapshots/chart.js";

const dayStart = (day: string) => new Date(`${day}T00:00:00Z`);

/**
 * The fleet's size over the whole window: the axis spans every day of it, the line starts at the
 * first figure, and the days before that say they have none rather than draw a 0 or vanish.
 */
function growthChart(dashboard: Dashboard): string {
  const { days, firstDay } = dashboard.growth;
  const first = days[0];
  const last = days.at(-1);
  const measured = firstDay === null ? [] : days.filter((point) => point.day >= firstDay);
  return renderLineChart(
    [
      {
        name: "Stored by all repositories",
        points: measured.map((point) => ({ at: dayStart(point.day), value: point.storedBytes })),
      },
    ],
    {
      title: "Repository size of the fleet per day (UTC)",
      format: formatBytes,
      ...(first && last ? { range: { from: dayStart(first.day), to: dayStart(last.day) } } : {}),
    },
  );
}

/** The caption's first figure: the first day with one, not the window's first day. */
function growthFirstFigure(dashboard: Dashboard) {
  const { days, firstDay } = dashboard.growth;
  return days.find((point) => point.day === firstDay) ?? null;
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
      growthFirst: growthFirstFigure(dashboard),
      timeZone,
    });
  });
  return routes;
}
