/**
 * @module routes/fleet-api
 * The host list of the JSON API, the same page of rows as the fleet page (routes/fleet-pages.ts):
 * `?state=&q=&sort=name|last_snapshot|status&order=asc|desc&page=&limit=` (fleet/fleet-list.ts),
 * answered with the total the filter matches and the number of pages.
 */
import { Hono } from "hono";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, requireRole } from "../auth/actor.js";
import { fleetPageJson, listFleetPage } from "../fleet/fleet-list.js";
import { readHostListQuery } from "../fleet/fleet-query.js";

export function fleetApiRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const viewer = requireRole("viewer");
  routes.get("/api/hosts", viewer, async (c) => {
    const params = readHostListQuery(c.req.query());
    return c.json(fleetPageJson(await listFleetPage(deps, params)));
  });
  return routes;
}
