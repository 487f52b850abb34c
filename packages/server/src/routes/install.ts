/**
 * @module routes/install
 * What a new host downloads: the install script, rendered for this server's URL and the agent
 * bundle it ships, and the bundle itself. Both are public: a host has no credential yet, and
 * the bundle's integrity comes from the SHA-256 inside the script.
 */
import { renderInstallScript } from "@fleetback/installer";
import { Hono } from "hono";
import type { AppDeps } from "../app.js";
import type { AppEnv } from "../auth/actor.js";
import { createBundleSource } from "../install/agent-bundle.js";

export function installRoutes(deps: AppDeps, bundle = createBundleSource()): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  routes.get("/install/install.sh", async (c) => {
    const agent = await bundle();
    const script = renderInstallScript({
      baseUrl: deps.config.baseUrl,
      agentVersion: agent.version,
      bundleSha256: agent.sha256,
    });
    return c.body(script, 200, {
      "Content-Type": "text/x-shellscript; charset=utf-8",
      "Cache-Control": "no-store",
    });
  });
  routes.get("/install/agent/:version", async (c) => {
    const agent = await bundle();
    if (c.req.param("version") !== agent.version) {
      return c.text(`This server ships agent ${agent.version} only.`, 404);
    }
    return c.body(new Uint8Array(agent.body), 200, {
      "Content-Type": "text/javascript; charset=utf-8",
      "X-Fleetback-Sha256": agent.sha256,
      "Cache-Control": "public, max-age=300",
    });
  });
  return routes;
}
