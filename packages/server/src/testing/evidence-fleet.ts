/**
 * @module testing/evidence-fleet
 * The fleet the evidence report tests read: hosts web and db labelled env=prod and dev labelled
 * env=dev, each with the named source groups, and a snapshot history that grows the way agents
 * report it (every list whole, newest first).
 */
import { sourceGroups } from "@fleetback/db";
import type { Snapshot } from "@fleetback/protocol";
import { replaceSnapshots } from "../snapshots/snapshot-store.js";
import { seedHost, snapshotAt } from "./seed.js";
import type { TestDeps } from "./test-deps.js";

type FleetHost = "web" | "db" | "dev";

/** Seeds the three hosts with `groups` (names per host), created now; group ids are `<host id>-<name>`. */
export async function seedEvidenceFleet(deps: TestDeps, groups: Record<FleetHost, readonly string[]>) {
  const createdAt = deps.clock.now();
  const fleet = {
    web: (await seedHost(deps, { name: "web", labels: { env: "prod" } })).host,
    db: (await seedHost(deps, { name: "db", labels: { env: "prod" } })).host,
    dev: (await seedHost(deps, { name: "dev", labels: { env: "dev" } })).host,
  };
  for (const key of ["web", "db", "dev"] as const) {
    const hostId = fleet[key].id;
    for (const name of groups[key]) {
      await deps.db.insert(sourceGroups).values({ id: `${hostId}-${name}`, hostId, name, createdAt });
    }
  }
  return fleet;
}

/**
 * Returns `record(host, tags)`: adds one snapshot per tag, taken now, to the host's history and
 * stores the whole list as its agent's report.
 */
export function snapshotHistory(deps: Pick<TestDeps, "db" | "clock">) {
  const lists = new Map<string, Snapshot[]>();
  return async (host: { id: string; resticHost: string }, tags: readonly string[]) => {
    const now = deps.clock.now();
    const all = [...(lists.get(host.id) ?? []), ...tags.map((tag) => snapshotAt(host.resticHost, now, tag))];
    lists.set(host.id, all);
    await replaceSnapshots(deps.db, host.id, {
      refreshed_at: now.toISOString(),
      snapshots: [...all].reverse(),
    });
  };
}
