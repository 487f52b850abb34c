/**
 * @module testing/test-deps
 * Builds real ServerDeps for tests: a migrated PGlite (or PostgreSQL) database, a random key, a
 * manual clock, the local hub, real views, and a logger whose lines the test can read (and grep
 * for secrets). Nothing here is a mock.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateSigningKeyPair } from "@fleetback/crypto";
import type { Database, Engine, PubSub } from "@fleetback/db";
import { openTestDatabase } from "@fleetback/db/testing";
import { createViews, loadStaticAssets } from "@fleetback/web";
import { importShippedBundle } from "../agent-artifacts/agent-bundle.js";
import { createBundleStore } from "../agent-artifacts/bundle-store.js";
import type { AppDeps } from "../app-deps.js";
import { createBootstrapState } from "../auth/bootstrap.js";
import { createManualClock } from "../clock.js";
import { type Cluster, startCluster } from "../cluster.js";
import { type Config, loadConfig } from "../config.js";
import { createLocalHub, type LocalHub } from "../hub/local-hub.js";
import { createIds } from "../ids.js";
import { createInProcessJobEvents } from "../jobs/in-process-job-events.js";
import { createLogger } from "../log.js";
import { createNotifier, type NotifierOptions } from "../notifications/notifier.js";

export interface TestDeps extends AppDeps {
  hub: LocalHub;
  /** Set when the deps run as a replica (options.cluster). */
  cluster?: Cluster;
  clock: ReturnType<typeof createManualClock>;
  /** Every log line written so far (JSON text). */
  logLines: string[];
  close(): Promise<void>;
}

const assets = loadStaticAssets();

export function testConfig(overrides: Partial<Config> = {}): Config {
  const loaded = loadConfig({
    FLEETBACK_DATA_DIR: "/nonexistent-test-data-dir",
    // Notification tests deliver to receivers on 127.0.0.1, which the server refuses unless
    // allow-listed, as an operator with a local relay would; notification-addresses.test.ts
    // passes its own list to see the refusals.
    FLEETBACK_NOTIFY_ALLOW_NETWORKS: "127.0.0.0/8",
  });
  if (!loaded.ok) {
    throw new Error(loaded.errors.join("; "));
  }
  return { ...loaded.config, ...overrides };
}

export interface TestDepsOptions {
  engine?: Engine;
  db?: Database;
  config?: Partial<Config>;
  notifier?: NotifierOptions;
  /**
   * Runs as a replica (cluster hub and job events, as production does on PostgreSQL). `pubsub` is
   * the shared database's when `db` is given; the owned database's otherwise.
   */
  cluster?: { pubsub?: PubSub; heartbeatMs?: number; replicaTtlMs?: number };
  /** Keys shared with another replica, which must open the same sealed secrets. */
  keys?: TestDeps["keys"];
  releaseKey?: TestDeps["releaseKey"];
}

export async function createTestDeps(options: TestDepsOptions = {}): Promise<TestDeps> {
  const owned = options.db ? undefined : await openTestDatabase(options.engine ?? "pglite");
  const db = options.db ?? owned?.db;
  if (!db) {
    throw new Error("no test database");
  }
  const logLines: string[] = [];
  const log = createLogger("debug", { write: (line: string) => logLines.push(line) });
  const config = testConfig(options.config);
  const clock = createManualClock(new Date("2026-11-21T12:00:00Z"));
  const keys = options.keys ?? { secret: new Uint8Array(randomBytes(32)) };
  // The data dir of a test is only its bundle store: a fresh temp dir holding the shipped bundle.
  const bundleDir = await mkdtemp(join(tmpdir(), "fleetback-test-bundles-"));
  const releaseKey = options.releaseKey ?? generateSigningKeyPair();
  const agentBundles = createBundleStore({ dir: join(bundleDir, "agent-bundles"), releaseKey, clock });
  await importShippedBundle(agentBundles);
  // Real delivery with short waits between attempts, so a test that raises an alert sees every
  // attempt quickly; the per-attempt deadline is long, since a loaded machine is slow, not broken.
  const notifier = createNotifier(
    { db, log, clock, keys, config },
    { backoffMs: 20, attemptTimeoutMs: 30_000, closeTimeoutMs: 2_000, ...options.notifier },
  );
  const ids = createIds();
  const pubsub = options.cluster?.pubsub ?? owned?.pubsub;
  if (options.cluster && !pubsub) {
    throw new Error("a replica on a shared db needs that db's pubsub");
  }
  const cluster =
    options.cluster && pubsub
      ? await startCluster({
          db,
          pubsub,
          ids,
          log,
          ...(options.cluster.heartbeatMs === undefined ? {} : { heartbeatMs: options.cluster.heartbeatMs }),
          ...(options.cluster.replicaTtlMs === undefined
            ? {}
            : { replicaTtlMs: options.cluster.replicaTtlMs }),
        })
      : undefined;
  return {
    config,
    db,
    log,
    clock,
    ids,
    keys,
    releaseKey,
    agentBundles,
    notifier,
    hub: cluster?.hub ?? createLocalHub(),
    jobEvents: cluster?.jobEvents ?? createInProcessJobEvents(),
    ...(cluster ? { cluster } : {}),
    views: createViews({ assets, now: () => clock.now(), timeZone: config.timeZone }),
    readiness: { check: async () => ({ database: "test" }) },
    bootstrap: await createBootstrapState(db, "test-bootstrap-token-0123456789"),
    logLines,
    close: async () => {
      await cluster?.close();
      await notifier.close();
      await owned?.close();
      await rm(bundleDir, { recursive: true, force: true });
    },
  };
}
