/**
 * @module tickers/db-upkeep
 * Keeps the embedded database healthy over months (issue 40.2): every few minutes, when the
 * server has been mostly idle since the last look (its event loop busy under a quarter of the
 * time), one upkeep pass (@fleetback/db upkeep: vacuum and analyze by autovacuum's thresholds,
 * then a checkpoint). A busy server is left alone and looked at again next period. PostgreSQL has
 * its own autovacuum and checkpointer, so this runs on the embedded database only.
 */
import { performance } from "node:perf_hooks";
import { type Database, type UpkeepReport, upkeep } from "@fleetback/db";
import type { Logger } from "../log.js";

export const DB_UPKEEP_PERIOD_MS = 5 * 60_000;
/** Event-loop utilisation under which the server counts as idle. */
export const DB_UPKEEP_IDLE_BELOW = 0.25;

export type UpkeepOutcome =
  | { ran: false; utilization: number }
  | ({ ran: true; utilization: number } & UpkeepReport);

/**
 * The tick: `utilization` is read from the event loop since the previous tick unless given (a
 * test says how busy the server was).
 */
export function createDbUpkeep(deps: { db: Database; log: Logger }) {
  let last = performance.eventLoopUtilization();
  return async (measured?: number): Promise<UpkeepOutcome> => {
    const since = performance.eventLoopUtilization(last);
    last = performance.eventLoopUtilization();
    const utilization = measured ?? since.utilization;
    if (utilization >= DB_UPKEEP_IDLE_BELOW) {
      deps.log.debug({ utilization }, "database upkeep put off: the server is busy");
      return { ran: false, utilization };
    }
    const started = performance.now();
    const report = await upkeep(deps.db, { checkpoint: true });
    if (report.vacuumed.length + report.analyzed.length > 0) {
      deps.log.info(
        { ...report, ms: Math.round(performance.now() - started) },
        "embedded database vacuumed and analyzed",
      );
    }
    return { ran: true, utilization, ...report };
  };
}
