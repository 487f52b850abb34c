/**
 * @module server-tickers
 * The server's periodic work in one table, each at its production period unless a test shortens
 * it. Every tick reads the time from the deps' clock, so a test's manual clock decides what is due.
 */
import { withAdvisoryLock } from "@fleetback/db";
import type { ServerDeps } from "./deps.js";
import { DIGEST_TICK_PERIOD_MS, digestTick } from "./digest/digest-ticker.js";
import { PENDING_SWEEP_PERIOD_MS, sweepPendingHosts } from "./enrolment/announce.js";
import { EVIDENCE_PRUNE_PERIOD_MS, pruneEvidence } from "./evidence/evidence-record.js";
import { createCronTimes } from "./freshness/cron-times.js";
import { healthTick } from "./freshness/health-alerts.js";
import { maintenanceTick } from "./maintenance/maintenance-ticker.js";
import { REPORT_TICK_PERIOD_MS, reportTick } from "./reports/report-ticker.js";
import { RETRY_TICK_PERIOD_MS, retryTick } from "./sources/retry-ticker.js";
import { createDbUpkeep, DB_UPKEEP_PERIOD_MS } from "./tickers/db-upkeep.js";
import { OFFLINE_SWEEP_PERIOD_MS, sweepOfflineHosts } from "./tickers/offline-sweeper.js";
import { startTicker, type Ticker } from "./tickers/ticker.js";
import { ROLLOUT_TICK_PERIOD_MS, rolloutTick } from "./updates/ring-rollout.js";

export type ServerTickerName =
  | "offline-sweeper"
  | "pending-host-sweeper"
  | "retry-ticker"
  | "maintenance-ticker"
  | "health-ticker"
  | "rollout-ticker"
  | "evidence-pruner"
  | "digest-ticker"
  | "report-ticker"
  | "db-upkeep";

export interface ServerTickerOptions {
  /** Milliseconds between ticks, per ticker (tests shorten them). */
  periodMs?: Partial<Record<ServerTickerName, number>>;
}

export function startServerTickers(deps: ServerDeps, options: ServerTickerOptions = {}): Ticker {
  const { clock, log } = deps;
  const cronTimes = createCronTimes();
  const table: [ServerTickerName, number, () => Promise<unknown>][] = [
    ["offline-sweeper", OFFLINE_SWEEP_PERIOD_MS, () => sweepOfflineHosts(deps, clock.now())],
    [
      "pending-host-sweeper",
      PENDING_SWEEP_PERIOD_MS,
      () => withAdvisoryLock(deps.db, "pending-host-sweeper", (tx) => sweepPendingHosts(tx, clock.now())),
    ],
    ["retry-ticker", RETRY_TICK_PERIOD_MS, () => retryTick(deps, clock.now())],
    ["maintenance-ticker", deps.config.maintenanceIntervalMs, () => maintenanceTick(deps, clock.now())],
    ["health-ticker", deps.config.healthIntervalMs, () => healthTick(deps, clock.now(), cronTimes)],
    ["rollout-ticker", ROLLOUT_TICK_PERIOD_MS, () => rolloutTick(deps)],
    [
      "evidence-pruner",
      EVIDENCE_PRUNE_PERIOD_MS,
      () => withAdvisoryLock(deps.db, "evidence-pruner", (tx) => pruneEvidence(tx, clock.now())),
    ],
    ["digest-ticker", DIGEST_TICK_PERIOD_MS, () => digestTick(deps, clock.now())],
    ["report-ticker", REPORT_TICK_PERIOD_MS, () => reportTick(deps, clock.now())],
  ];
  if (!deps.config.databaseUrl) {
    const dbUpkeep = createDbUpkeep(deps);
    table.push(["db-upkeep", DB_UPKEEP_PERIOD_MS, () => dbUpkeep()]);
  }
  const tickers = table.map(([name, periodMs, tick]) =>
    startTicker(tick, options.periodMs?.[name] ?? periodMs, { name, log }),
  );
  return {
    // All timers are cleared before any tick in flight is awaited, so none starts a new tick meanwhile.
    async stop() {
      await Promise.all(tickers.map((ticker) => ticker.stop()));
    },
  };
}
