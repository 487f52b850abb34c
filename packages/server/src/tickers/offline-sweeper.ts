/**
 * @module tickers/offline-sweeper
 * A host whose agent has been silent for OFFLINE_AFTER_MS (three missed heartbeats) is marked
 * offline, and its socket, if this process holds one, is closed: a half-open TCP connection can
 * look alive to the server for a long time. Runs under an advisory lock, so with several
 * replicas one of them sweeps per tick.
 */
import { hosts, withAdvisoryLock } from "@fleetback/db";
import { OFFLINE_AFTER_MS } from "@fleetback/protocol";
import { and, eq, isNull, lt, or } from "drizzle-orm";
import type { ServerDeps } from "../deps.js";

export const OFFLINE_SWEEP_PERIOD_MS = 15_000;

/** Not a contract close code: the agent simply reconnects, as after any other drop. */
const SILENT_CLOSE = { code: 1001, reason: "no heartbeat for 90 s" } as const;

/** Returns the ids of the hosts it marked offline; empty when another replica held the lock. */
export async function sweepOfflineHosts(
  deps: Pick<ServerDeps, "db" | "hub" | "log">,
  now: Date,
): Promise<string[]> {
  const cutoff = new Date(now.getTime() - OFFLINE_AFTER_MS);
  const outcome = await withAdvisoryLock(deps.db, "offline-sweeper", async (tx) =>
    tx
      .update(hosts)
      .set({ status: "offline", updatedAt: now })
      .where(and(eq(hosts.status, "online"), or(isNull(hosts.lastSeenAt), lt(hosts.lastSeenAt, cutoff))))
      .returning({ id: hosts.id }),
  );
  if (!outcome.ran) {
    return [];
  }
  const ids = outcome.result.map((row) => row.id);
  for (const id of ids) {
    deps.log.info({ host_id: id }, "host marked offline: no heartbeat for 90 s");
    deps.hub.disconnect(id, SILENT_CLOSE.code, SILENT_CLOSE.reason);
  }
  return ids;
}
