/**
 * @module routes/fleet-api
 * The host list of the JSON API, the same page of rows as the fleet page (routes/fleet-pages.ts):
 * `?state=&q=&sort=name|last_snapshot|status&order=asc|desc&page=&limit=` (fleet/fleet-list.ts),
 * answered with the total the filter matches and the number of pages.
 */
import type { Hono } from "hono";
import type { AppDeps } from "../app-deps.js";
import type { AppEnv } from "../auth/actor.js";
import { fleetPageJson, listFleetPage } from "../fleet/fleet-list.js";
import { fleetListParams, HostListQuery } from "../fleet/fleet-query.js";
import { apiGroup } from "../openapi/api-route.js";
import { FleetPage } from "../openapi/host-schemas.js";

export const FLEET_API = apiGroup<AppDeps>({ tag: "Hosts" });

FLEET_API.add({
  id: "listHosts",
  method: "get",
  path: "/api/hosts",
  summary: "List hosts, filtered, sorted and paged as the host list page",
  description: "An empty `state` or `q` means no filter.",
  access: "viewer",
  query: HostListQuery,
  responses: { 200: { description: "One page of hosts.", schema: FleetPage } },
  handler: async (c, { query }, deps) => {
    const params = fleetListParams(query);
    return c.json(fleetPageJson(await listFleetPage(deps, params)));
  },
});

export function fleetApiRoutes(deps: AppDeps): Hono<AppEnv> {
  return FLEET_API.routes(deps);
}
