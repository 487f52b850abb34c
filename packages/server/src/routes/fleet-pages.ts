/**
 * @module routes/fleet-pages
 * The fleet overview page (refreshing its table every 10 s through an htmx partial; admins also
 * get the agent rollout form). The JSON host list is in routes/fleet-api.ts.
 */
import { Hono } from "hono";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, hasRole, requireRole } from "../auth/actor.js";
import { listFleet } from "../hosts/fleet-view.js";
import { renderPage } from "../http/render.js";

export function fleetPageRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const viewer = requireRole("viewer");
  /** The versions an admin can roll out, each with its single-executable platforms. */
  async function agentVersions() {
    const bundles = await deps.agentBundles.list();
    return Promise.all(
      bundles.map(async (bundle) => ({
        version: bundle.version,
        sea: await deps.agentBundles.listSea(bundle.version),
      })),
    );
  }
  routes.get("/", viewer, async (c) => {
    return renderPage(c, deps.views, "pages/fleet.njk", {
      title: "Fleet",
      hosts: await listFleet(deps.db),
      agentVersions: hasRole(c.get("actor"), "admin") ? await agentVersions() : [],
    });
  });
  routes.get("/partials/fleet", viewer, async (c) => {
    return renderPage(c, deps.views, "partials/fleet-table.njk", { hosts: await listFleet(deps.db) });
  });
  return routes;
}
