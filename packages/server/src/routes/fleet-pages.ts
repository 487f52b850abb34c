/**
 * @module routes/fleet-pages
 * The host list at /hosts, optionally filtered by state (`?state=online|offline|overdue|failing`,
 * the dashboard's numbers link here), refreshing its table every 10 s through an htmx partial
 * that keeps the filter; admins also get the agent rollout form. The JSON host list is in
 * routes/fleet-api.ts; the landing page is the dashboard (routes/dashboard-pages.ts).
 */
import { Hono } from "hono";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, hasRole, requireRole } from "../auth/actor.js";
import { HOST_STATES, HostListQuery, listHostsInState } from "../health/host-states.js";
import { renderPage } from "../http/render.js";
import { readQuery } from "../http/validate.js";

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
  routes.get("/hosts", viewer, async (c) => {
    const { state } = readQuery(c, HostListQuery);
    const { all, hosts } = await listHostsInState(deps, state);
    return renderPage(c, deps.views, "pages/fleet.njk", {
      title: state ? `Hosts ${state}` : "Hosts",
      hosts,
      // The rollout form offers every host, whatever the filter shows.
      rolloutHosts: all,
      state,
      states: HOST_STATES,
      agentVersions: hasRole(c.get("actor"), "admin") ? await agentVersions() : [],
    });
  });
  routes.get("/partials/fleet", viewer, async (c) => {
    const { state } = readQuery(c, HostListQuery);
    const { hosts } = await listHostsInState(deps, state);
    return renderPage(c, deps.views, "partials/fleet-table.njk", { hosts, state });
  });
  return routes;
}
