/**
 * @module routes/static
 * Serves the page assets from memory. URLs carry a content hash, so a response may be cached
 * for a year: a new release changes the URL.
 */
import type { StaticAsset } from "@fleetback/web";
import { Hono } from "hono";
import type { AppEnv } from "../auth/actor.js";

export function staticRoutes(assets: Map<string, StaticAsset>): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  routes.get("/static/:name", (c) => {
    const asset = assets.get(c.req.path);
    if (!asset) {
      return c.text("Not found", 404);
    }
    const versioned = c.req.query("v") === asset.hash;
    return c.body(new Uint8Array(asset.body), 200, {
      "Content-Type": asset.contentType,
      "Cache-Control": versioned ? "public, max-age=31536000, immutable" : "no-cache",
    });
  });
  return routes;
}
