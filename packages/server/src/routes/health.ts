/**
 * @module routes/health
 * Liveness and readiness for supervisors and load balancers. /healthz says the process answers;
 * /readyz says the database answers and every migration is applied, so traffic can be sent here.
 */
import { Hono } from "hono";
import type { Readiness } from "../app-deps.js";

export function healthRoutes(readiness: Readiness): Hono {
  const routes = new Hono();
  routes.get("/healthz", (c) => c.json({ status: "ok" }));
  routes.get("/readyz", async (c) => {
    try {
      const detail = await readiness.check();
      return c.json({ status: "ready", ...detail });
    } catch {
      return c.json({ status: "unavailable", message: "database not reachable or not migrated" }, 503);
    }
  });
  return routes;
}
