/**
 * @module routes/fleet-api
 * The host list of the JSON API, the same rows as the fleet page (routes/fleet-pages.ts).
 */
import { Hono } from "hono";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, requireRole } from "../auth/actor.js";
import { fleetRowJson, listFleet } from "../hosts/fleet-view.js";

export function fleetApiRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const viewer = requireRole("viewer");
  routes.get("/api/hosts", viewer, async (c) => {
    return c.json({ hosts: (await listFleet(deps.db)).map(fleetRowJson) });
  });
  return routes;
}
