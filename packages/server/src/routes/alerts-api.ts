/**
 * @module routes/alerts-api
 * Alerts in JSON, with the open/resolved filter, and the manual resolve (operators). Alerts open
 * and resolve by themselves from job outcomes (alerts/job-alerts.ts); a manual resolve is for a
 * failure the operator has dealt with in another way. The page is routes/alerts-pages.ts.
 */
import type { Hono } from "hono";
import { ALERTS_PAGE, AlertsQuery } from "../alerts/alert-query.js";
import { alertJson, listAlerts, resolveAlertById } from "../alerts/alerts.js";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, auditOf } from "../auth/actor.js";
import { nextBefore } from "../http/next-before.js";
import { AlertPage, AlertResolved } from "../openapi/alert-schemas.js";
import { apiGroup } from "../openapi/api-route.js";

export const ALERT_API = apiGroup<AppDeps>({ tag: "Alerts" });

ALERT_API.add({
  id: "listAlerts",
  method: "get",
  path: "/api/alerts",
  summary: "List alerts, newest first",
  description: "`state` defaults to open.",
  access: "viewer",
  query: AlertsQuery,
  responses: { 200: { description: "A page of alerts.", schema: AlertPage } },
  handler: async (c, { query }, deps) => {
    const limit = Math.min(Number(query.limit ?? ALERTS_PAGE), 200);
    const found = await listAlerts(deps.db, {
      state: query.state ?? "open",
      hostId: query.host_id,
      before: query.before,
      limit,
    });
    return c.json({ alerts: found.map(alertJson), next_before: nextBefore(found, limit) });
  },
});

ALERT_API.add({
  id: "resolveAlert",
  method: "post",
  path: "/api/alerts/:id/resolve",
  summary: "Resolve an alert by hand",
  access: "operator",
  params: { id: "The alert's id." },
  responses: { 200: { description: "Resolved.", schema: AlertResolved } },
  errors: { 409: "Already resolved." },
  handler: async (c, _input, deps) => {
    const alert = await resolveAlertById(deps, auditOf(c), c.req.param("id"));
    return c.json({ alert: { id: alert.id, resolved_at: alert.resolvedAt, resolved_by: alert.resolvedBy } });
  },
});

export function alertApiRoutes(deps: AppDeps): Hono<AppEnv> {
  return ALERT_API.routes(deps);
}
