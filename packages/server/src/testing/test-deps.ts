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
import type { Database, Engine } from "@fleetback/db";
import { createTestDatabase } from "@fleetback/db/testing";
import { createViews, loadStaticAssets } from "@fleetback/web";
import type { AppDeps } from "../app-deps.js";
import { createBootstrapState } from "../auth/bootstrap.js";
import { createManualClock } from "../clock.js";
import { type Config, loadConfig } from "../config.js";
import { createLocalHub, type LocalHub } from "../hub/local-hub.js";
import { createIds } from "../ids.js";
import { importShippedBundle } from "../install/agent-bundle.js";
import { createBundleStore } from "../install/bundle-store.js";
import { createInProcessJobEvents } from "../jobs/in-process-job-events.js";
import { createLogger } from "../log.js";
import { createNotifier, type NotifierOptions } from "../notifications/notifier.js";

export interface TestDeps extends AppDeps {
  hub: LocalHub;
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

export async function createTestDeps(
  options: { engine?: Engine; db?: Database; config?: Partial<Config>; notifier?: NotifierOptions } = {},
): Promise<TestDeps> {
  const owned = options.db ? undefined : await createTestDatabase(options.engine ?? "pglite");
  const db = options.db ?? owned?.db;
  if (!db) {
    throw new Error("no test database");
  }
  const logLines: string[] = [];
  const log = createLogger("debug", { write: (line: string) => logLines.push(line) });
  const config = testConfig(options.config);
  const clock = createManualClock(new Date("2026-11-21T12:00:00Z"));
  const keys = { secret: new Uint8Array(randomBytes(32)) };
  // The data dir of a test is only its bundle store: a fresh temp dir holding the shipped bundle.
  const bundleDir = await mkdtemp(join(tmpdir(), "fleetback-test-bundles-"));
  const releaseKey = generateSigningKeyPair();
  const agentBundles = createBundleStore({ dir: join(bundleDir, "agent-bundles"), releaseKey, clock });
  await importShippedBundle(agentBundles);
  // Real delivery with short waits, so a test that raises an alert sees every attempt quickly.
  const notifier = createNotifier(
    { db, log, clock, keys, config },
    { backoffMs: 20, attemptTimeoutMs: 2_000, closeTimeoutMs: 2_000, ...options.notifier },
  );
  return {
    config,
    db,
    log,
    clock,
    ids: createIds(),
    keys,
    releaseKey,
    agentBundles,
    notifier,
    hub: createLocalHub(),
    jobEvents: createInProcessJobEvents(),
    views: createViews({ assets }),
    readiness: { check: async () => ({ database: "test" }) },
    bootstrap: await createBootstrapState(db, "test-bootstrap-token-0123456789"),
    logLines,
    close: async () => {
      await notifier.close();
      await owned?.close();
      await rm(bundleDir, { recursive: true, force: true });
    },
  };
}
