/**
 * @module routes/metrics
 * GET /metrics for Prometheus. Mounted before session authentication: a scraper has no session
 * and its bearer token is not an API token. Access is the metrics token or an allowed source
 * network (metrics/metrics-access.ts); switched off, the path answers like an unknown one.
 */
import { Hono } from "hono";
import type { AppDeps } from "../app-deps.js";
import type { AppEnv } from "../auth/actor.js";
import { RequestError, unavailable } from "../errors.js";
import { clientIp } from "../http/client-address.js";
import { handleNotFound } from "../http/error-handler.js";
import { createMetricsGate } from "../metrics/metrics-access.js";
import { createMetricsScraper } from "../metrics/scrape.js";

export function metricsRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const gate = createMetricsGate(deps.config);
  const scraper = createMetricsScraper(deps);
  routes.get("/metrics", async (c) => {
    const access = gate({ authorization: c.req.header("Authorization"), clientIp: clientIp(c) });
    if (access === "disabled") {
      return handleNotFound(c);
    }
    if (access === "denied") {
      throw new RequestError("unauthorised", "Metrics need the metrics bearer token or an allowed address.", {
        headers: { "WWW-Authenticate": 'Bearer realm="fleetback metrics"' },
      });
    }
    const exposition = await scraper.scrape(deps.clock.now()).catch((err: unknown) => {
      // Every number comes from the database: without it a partial answer would read as a
      // fleet that shrank, so the scrape fails (Prometheus marks it down) with a warning here.
      deps.log.warn({ err }, "metrics scrape failed: the database did not answer it");
      throw unavailable("The metrics could not be read from the database; try again shortly.");
    });
    c.header("Cache-Control", "no-store");
    return c.body(exposition.body, 200, { "Content-Type": exposition.contentType });
  });
  return routes;
}
