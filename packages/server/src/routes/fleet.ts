/**
 * @module routes/fleet
 * The fleet overview page (refreshing its table every 10 s through an htmx partial) and the
 * host list of the JSON API.
 */
import { Hono } from "hono";
import type { AppDeps } from "../app.js";
import { type AppEnv, requireRole } from "../auth/actor.js";
import { fleetRowJson, listFleet } from "../hosts/fleet-view.js";
import { renderPage } from "../http/render.js";

export function fleetRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const viewer = requireRole("viewer");
  routes.get("/", viewer, async (c) => {
    return renderPage(c, deps.views, "pages/fleet.njk", { title: "Fleet", hosts: await listFleet(deps.db) });
  });
  routes.get("/partials/fleet", viewer, async (c) => {
    return renderPage(c, deps.views, "partials/fleet-table.njk", { hosts: await listFleet(deps.db) });
  });
  routes.get("/api/hosts", viewer, async (c) => {
    return c.json({ hosts: (await listFleet(deps.db)).map(fleetRowJson) });
  });
  return routes;
}
