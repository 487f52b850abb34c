/**
 * @module routes/alerts-api
 * Alerts in JSON, with the open/resolved filter, and the manual resolve (operators). Alerts open
 * and resolve by themselves from job outcomes (alerts/job-alerts.ts); a manual resolve is for a
 * failure the operator has dealt with in another way. The page is routes/alerts-pages.ts.
 */
import { Hono } from "hono";
import { ALERTS_PAGE, AlertsQuery } from "../alerts/alert-query.js";
import { alertJson, listAlerts, resolveAlertById } from "../alerts/alerts.js";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, auditOf, requireRole } from "../auth/actor.js";
import { readQuery } from "../http/validate.js";

export function alertApiRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const viewer = requireRole("viewer");
  const operator = requireRole("operator");

  routes.get("/api/alerts", viewer, async (c) => {
    const query = readQuery(c, AlertsQuery);
    const limit = Math.min(Number(query.limit ?? ALERTS_PAGE), 200);
    const found = await listAlerts(deps.db, {
      state: query.state ?? "open",
      hostId: query.host_id,
      before: query.before,
      limit,
    });
    return c.json({
      alerts: found.map(alertJson),
      next_before: found.length === limit ? found.at(-1)?.id : undefined,
    });
  });
  routes.post("/api/alerts/:id/resolve", operator, async (c) => {
    const alert = await resolveAlertById(deps, auditOf(c), c.req.param("id"));
    return c.json({ alert: { id: alert.id, resolved_at: alert.resolvedAt, resolved_by: alert.resolvedBy } });
  });
  return routes;
}
