/**
 * @module metrics/scrape
 * One /metrics answer: the fleet as the database has it now, then prom-client's default Node
 * process metrics of this replica (process_*, nodejs_*). The process metrics live on a registry of
 * the scraper's own, never prom-client's global one, so several servers in one process (tests)
 * do not collide; it is made at the first scrape, since it starts a GC observer and an event-loop
 * monitor that a server nobody scrapes does not need. fleetback_cluster_messages_dropped_total is
 * of this replica too: the live job log lines its outbox to the other replicas dropped when full.
 */
import { Counter, collectDefaultMetrics, Registry } from "prom-client";
import type { ServerDeps } from "../deps.js";
import { fleetRegistry } from "./fleet-registry.js";
import { loadFleetSnapshot } from "./fleet-snapshot.js";

export interface Exposition {
  contentType: string;
  body: string;
}

export interface MetricsScraper {
  scrape(now: Date): Promise<Exposition>;
}

function replicaRegistry(hub: ServerDeps["hub"]): Registry {
  const registry = new Registry();
  new Counter({
    name: "fleetback_cluster_messages_dropped_total",
    help: "Live job log lines this replica did not send to the other replicas because its outbox was full (they are still stored).",
    registers: [registry],
  }).inc(hub.droppedBusMessages?.() ?? 0);
  return registry;
}

export function createMetricsScraper(deps: Pick<ServerDeps, "db" | "config" | "hub">): MetricsScraper {
  let processMetrics: Registry | undefined;
  return {
    async scrape(now) {
      if (!processMetrics) {
        processMetrics = new Registry();
        collectDefaultMetrics({ register: processMetrics });
      }
      const fleet = fleetRegistry(await loadFleetSnapshot(deps, now), new Registry());
      const merged = Registry.merge([fleet, replicaRegistry(deps.hub), processMetrics]);
      return { contentType: merged.contentType, body: await merged.metrics() };
    },
  };
}
