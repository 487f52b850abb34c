/**
 * @module routes/alerts-pages
 * The Alerts page, with the open/resolved filter, and its manual resolve form (operators). The
 * JSON twins are in routes/alerts-api.ts.
 */
import { Hono } from "hono";
import { Type } from "typebox";
import { ALERTS_PAGE, AlertsQuery } from "../alerts/alert-query.js";
import { alertJson, listAlerts, resolveAlertById } from "../alerts/alerts.js";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, auditOf, hasRole, requireRole } from "../auth/actor.js";
import { redirectAfterPost, renderPage } from "../http/render.js";
import { readForm, readQuery } from "../http/validate.js";

const EmptyForm = Type.Object({}, { additionalProperties: false });

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
      nextBefore: found.length === ALERTS_PAGE ? found.at(-1)?.id : undefined,
      canResolve: hasRole(c.get("actor"), "operator"),
    });
  });
  routes.post("/alerts/:id/resolve", operator, async (c) => {
    await readForm(c, EmptyForm);
    await resolveAlertById(deps, auditOf(c), c.req.param("id"));
    return redirectAfterPost(c, "/alerts");
  });
  return routes;
}
