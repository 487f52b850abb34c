/**
 * @module routes/alerts-pages
 * The Alerts page, with the open/resolved filter, and its manual resolve form (operators). The
 * JSON twins are in routes/alerts-api.ts.
 */
import { Hono } from "hono";
import { ALERTS_PAGE, AlertsQuery } from "../alerts/alert-query.js";
import { alertJson, listAlerts, resolveAlertById } from "../alerts/alerts.js";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, hasRole, requireRole } from "../auth/actor.js";
import { idButton } from "../auth/id-button.js";
import { nextBefore } from "../http/next-before.js";
import { renderPage } from "../http/render.js";
import { readQuery } from "../http/validate.js";

export function alertPageRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const viewer = requireRole("viewer");
  const operator = requireRole("operator");

  routes.get("/alerts", viewer, async (c) => {
    const query = readQuery(c, AlertsQuery);
    const state = query.state ?? "open";
    const found = await listAlerts(deps.db, { state, before: query.before, limit: ALERTS_PAGE });
    return renderPage(c, deps.views, "pages/alerts.njk", {
      title: "Alerts",
      state,
      alerts: found.map(alertJson),
      nextBefore: nextBefore(found, ALERTS_PAGE),
      canResolve: hasRole(c.get("actor"), "operator"),
    });
  });
  routes.post("/alerts/:id/resolve", operator, idButton(deps, resolveAlertById, "/alerts"));
  return routes;
}
