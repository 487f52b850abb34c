/**
 * @module routes/alerts
 * Alerts, JSON and page, with the open/resolved filter, and the manual resolve (operators).
 * Alerts open and resolve by themselves from job outcomes (alerts/job-alerts.ts); a manual
 * resolve is for a failure the operator has dealt with in another way.
 */
import { type Context, Hono } from "hono";
import { Type } from "typebox";
import { alertJson, listAlerts, resolveAlertById } from "../alerts/alerts.js";
import type { AppDeps } from "../app.js";
import { writeAudit } from "../audit/audit.js";
import { type AppEnv, actorOf, hasRole, requireRole } from "../auth/actor.js";
import { clientIp, redirectAfterPost, renderPage } from "../http/render.js";
import { readForm, readQuery } from "../http/validate.js";

export const ALERTS_PAGE = 100;

const Ulid = Type.String({ pattern: "^[0-9A-HJKMNP-TV-Z]{26}$" });
const AlertsQuery = Type.Object(
  {
    state: Type.Optional(Type.Union([Type.Literal("open"), Type.Literal("resolved"), Type.Literal("all")])),
    host_id: Type.Optional(Ulid),
    before: Type.Optional(Ulid),
    limit: Type.Optional(Type.String({ pattern: "^[1-9][0-9]{0,2}$" })),
  },
  { additionalProperties: false },
);
const EmptyForm = Type.Object({}, { additionalProperties: false });

export function alertRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const viewer = requireRole("viewer");
  const operator = requireRole("operator");

  async function resolve(c: Context<AppEnv>) {
    const actor = actorOf(c);
    const alert = await resolveAlertById(deps.db, c.req.param("id") ?? "", actor.userId, deps.clock.now());
    await writeAudit(deps.db, deps.clock, {
      actor,
      action: "alert.resolve",
      targetKind: "alert",
      targetId: alert.id,
      details: { host_id: alert.hostId, kind: alert.kind },
      ip: clientIp(c),
    });
    return alert;
  }

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
    const alert = await resolve(c);
    return c.json({ alert: { id: alert.id, resolved_at: alert.resolvedAt, resolved_by: alert.resolvedBy } });
  });

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
    await resolve(c);
    return redirectAfterPost(c, "/alerts");
  });
  return routes;
}
