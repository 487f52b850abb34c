/**
 * @module server
 * Start-up sequence shared by main.ts and the tests: data dir, key file, database, migrations,
 * app, listening socket. Each step that can fail for an operator's reason fails with a
 * StartupError whose message is one line naming what to fix.
 */
import { mkdir, readFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { loadOrCreateKey, loadOrCreateSigningKey, type SigningKeyPair } from "@fleetback/crypto";
import { type Connection, connect, migrate, redactDatabaseUrl, withAdvisoryLock } from "@fleetback/db";
import { createViews, loadStaticAssets } from "@fleetback/web";
import {
  createAdaptorServer,
  type Http2Bindings,
  type HttpBindings,
  type ServerType,
} from "@hono/node-server";
import { type AgentChannel, attachAgentChannel } from "./agent-channel/attach-agent-channel.js";
import { type AppDeps, createApp } from "./app.js";

type App = ReturnType<typeof createApp>;

import { createBootstrapState } from "./auth/bootstrap.js";
import { type Clock, systemClock } from "./clock.js";
import { type Config, listenUrl } from "./config.js";
import { PENDING_SWEEP_PERIOD_MS, sweepPendingHosts } from "./enrolment/announce.js";
import { plainHttpWarning } from "./http/plain-http.js";
import { serverOptions } from "./http/request-limits.js";
import { attachUpgradeRouter, type UpgradeSource } from "./http/upgrade-router.js";
import { createLocalHub } from "./hub/local-hub.js";
import { createIds } from "./ids.js";
import { importShippedBundle } from "./install/agent-bundle.js";
import { type BundleStore, createBundleStore } from "./install/bundle-store.js";
import { importRelease } from "./install/release-import.js";
import { attachJobStreams, type JobStreams } from "./job-stream/job-stream.js";
import { createInProcessJobEvents } from "./jobs/in-process-job-events.js";
import type { Logger } from "./log.js";
import { MAINTENANCE_TICK_PERIOD_MS, maintenanceTick } from "./maintenance/maintenance-ticker.js";
import { createNotifier } from "./notifications/notifier.js";
import { RETRY_TICK_PERIOD_MS, retryTick } from "./retries/retry-ticker.js";
import { OFFLINE_SWEEP_PERIOD_MS, sweepOfflineHosts } from "./tickers/offline-sweeper.js";
import { startTicker, type Ticker } from "./tickers/ticker.js";

export class StartupError extends Error {
  override readonly name = "StartupError";
}

export interface RunningServer {
  /** Where the socket actually listens (the port is real even when 0 was asked for). */
  url: string;
  baseUrl: string;
  /** Set while no user exists: the one-time token that creates the first admin. */
  bootstrapToken: string | undefined;
  database: Connection;
  close(): Promise<void>;
}

async function describe(step: string, run: () => Promise<void>): Promise<void> {
  try {
    await run();
  } catch (err) {
    if (err instanceof StartupError) {
      throw err;
    }
    const reason = err instanceof Error ? err.message : String(err);
    throw new StartupError(`${step}: ${reason}`, { cause: err });
  }
}

/**
 * The release key and the agent artefact store, with the shipped bundle imported and, when
 * FLEETBACK_RELEASE_DIR is set, that release too. Used by start-up and by `import-release`; both
 * may run at once, since every artefact is written once through a rename.
 */
export async function openAgentStore(
  config: Pick<Config, "dataDir" | "releaseDir">,
  options: { log: Logger; clock: Clock },
): Promise<{ releaseKey: SigningKeyPair; agentBundles: BundleStore }> {
  const { log, clock } = options;
  const releaseKeyPath = join(config.dataDir, "release.key");
  let releaseKey: SigningKeyPair;
  try {
    const loaded = await loadOrCreateSigningKey(releaseKeyPath, {
      replacing: "makes agents refuse updates until they trust the new key",
    });
    releaseKey = loaded.keyPair;
    for (const warning of loaded.warnings) {
      log.warn({ file: releaseKeyPath }, warning);
    }
    if (loaded.created) {
      log.info({ file: releaseKeyPath, fingerprint: loaded.fingerprint }, "release key created");
    }
  } catch (err) {
    throw new StartupError(err instanceof Error ? err.message : `cannot load key file ${releaseKeyPath}`, {
      cause: err,
    });
  }

  const agentBundles: BundleStore = createBundleStore({
    dir: join(config.dataDir, "agent-bundles"),
    releaseKey,
    clock,
  });
  await describe(`cannot store the shipped agent bundle in ${agentBundles.dir}`, async () => {
    const imported = await importShippedBundle(agentBundles);
    if (imported.added) {
      log.info({ version: imported.info.version, sha256: imported.info.sha256 }, "agent bundle imported");
    }
  });
  const releaseDir = config.releaseDir;
  if (releaseDir !== undefined) {
    await describe(`cannot import the release in ${releaseDir} (FLEETBACK_RELEASE_DIR)`, async () => {
      for (const artefact of await importRelease(agentBundles, releaseDir)) {
        if (artefact.added) {
          log.info(
            { version: artefact.version, artefact: artefact.artefact, sha256: artefact.sha256 },
            "agent release artefact imported",
          );
        }
      }
    });
  }
  return { releaseKey, agentBundles };
}

export async function startServer(
  config: Config,
  options: { log: Logger; clock?: Clock },
): Promise<RunningServer> {
  const { log } = options;
  const clock = options.clock ?? systemClock;

  await describe(`cannot create data directory ${config.dataDir}`, () =>
    mkdir(config.dataDir, { recursive: true, mode: 0o700 }).then(() => undefined));

  const keyPath = join(config.dataDir, "secret.key");
  let secret: Uint8Array;
  try {
    const loaded = await loadOrCreateKey(keyPath);
    secret = loaded.key;
    for (const warning of loaded.warnings) {
      log.warn({ file: keyPath }, warning);
    }
  } catch (err) {
    throw new StartupError(err instanceof Error ? err.message : `cannot load key file ${keyPath}`, {
      cause: err,
    });
  }

  const { releaseKey, agentBundles } = await openAgentStore(config, { log, clock });

  const where = config.databaseUrl
    ? redactDatabaseUrl(config.databaseUrl)
    : `embedded PGlite in ${config.dataDir}`;
  let database: Connection | undefined;
  await describe(`cannot open database ${where}`, async () => {
    database = await connect({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
    await database.ping();
  });
  if (!database) {
    throw new StartupError(`cannot open database ${where}`);
  }
  const db = database;
  try {
    await describe("database migration failed", async () => {
      const report = await migrate(db.db);
      log.info(
        { applied: report.applied, already_applied: report.alreadyApplied, engine: db.engine },
        "migrations",
      );
    });
  } catch (err) {
    await db.close().catch(() => undefined);
    throw err;
  }

  // Built before listening: nothing that can fail may run while the socket is bound and unowned.
  const bootstrap = await createBootstrapState(db.db, config.bootstrapToken);
  const views = createViews({ assets: loadStaticAssets() });
  // The socket is bound before the app exists: with port 0 the base URL is only known once
  // listening, and the config is computed once and never changed. A request arriving in between
  // waits for the app.
  let appReady: (app: App) => void = () => undefined;
  const appPromise = new Promise<App>((resolve) => {
    appReady = resolve;
  });
  let server: ServerType;
  try {
    server = await listen((request, env) => appPromise.then((app) => app.fetch(request, env)), config);
  } catch (err) {
    await db.close().catch(() => undefined);
    const reason = err instanceof Error ? err.message : String(err);
    throw new StartupError(`cannot listen on ${config.listen.host}:${config.listen.port}: ${reason}`, {
      cause: err,
    });
  }
  const address = server.address() as AddressInfo;
  const url = listenUrl({ host: config.listen.host, port: address.port }, config.tls !== undefined);
  const baseUrl =
    config.listen.port === 0 && config.baseUrl === listenUrl(config.listen, config.tls !== undefined)
      ? url
      : config.baseUrl;
  const runtimeConfig: Config = Object.freeze({ ...config, baseUrl });

  const hub = createLocalHub();
  const notifier = createNotifier({ db: db.db, keys: { secret }, log, clock, config: runtimeConfig });
  const deps: AppDeps = {
    config: runtimeConfig,
    db: db.db,
    log,
    clock,
    ids: createIds(),
    keys: { secret },
    releaseKey,
    agentBundles,
    hub,
    jobEvents: createInProcessJobEvents(),
    views,
    notifier,
    bootstrap,
    readiness: {
      check: async () => {
        await db.ping();
        return { database: db.engine };
      },
    },
  };
  const app = createApp(deps);
  appReady(app);

  // ServerType's HTTP/2 members type 'upgrade' differently; node:http and node:https servers emit it.
  const upgrades = attachUpgradeRouter(server as UpgradeSource);
  const channel: AgentChannel = attachAgentChannel(upgrades, { ...deps, hub });
  const jobStreams: JobStreams = attachJobStreams(upgrades, deps, {
    authorise: (request, env) => app.fetch(request, env),
  });
  const sweeper: Ticker = startTicker(() => sweepOfflineHosts(deps, clock.now()), OFFLINE_SWEEP_PERIOD_MS, {
    name: "offline-sweeper",
    log,
  });
  const retryTicker: Ticker = startTicker(() => retryTick(deps, clock.now()), RETRY_TICK_PERIOD_MS, {
    name: "retry-ticker",
    log,
  });
  const maintenanceTicker: Ticker = startTicker(
    () => maintenanceTick(deps, clock.now()),
    MAINTENANCE_TICK_PERIOD_MS,
    { name: "maintenance-ticker", log },
  );
  const announceSweeper: Ticker = startTicker(
    async () => {
      await withAdvisoryLock(deps.db, "pending-host-sweeper", (tx) => sweepPendingHosts(tx, clock.now()));
    },
    PENDING_SWEEP_PERIOD_MS,
    { name: "pending-host-sweeper", log },
  );
  const plainHttp = plainHttpWarning(baseUrl);
  if (plainHttp) {
    log.warn({ base_url: baseUrl }, plainHttp);
  }

  let closing: Promise<void> | undefined;
  return {
    url,
    baseUrl,
    bootstrapToken: deps.bootstrap.token,
    database: db,
    close() {
      closing ??= (async () => {
        // Agents first: their sockets would hold server.close() open, and their last work needs the db.
        await sweeper.stop();
        await announceSweeper.stop();
        await retryTicker.stop();
        await maintenanceTicker.stop();
        await channel.close();
        // Open job-page streams would hold server.close() open; browsers reconnect to the next server.
        await jobStreams.close();
        upgrades.detach();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          if ("closeAllConnections" in server) {
            server.closeIdleConnections();
          }
        });
        // Attempts in flight still record their outcome; the rest stays queued for the next start.
        await notifier.close();
        await db.close();
      })();
      return closing;
    },
  };
}

async function listen(
  fetch: (request: Request, env: HttpBindings | Http2Bindings) => Promise<Response>,
  config: Config,
): Promise<ServerType> {
  const tlsOptions = config.tls
    ? { cert: await readFile(config.tls.certFile), key: await readFile(config.tls.keyFile) }
    : undefined;
  const server = tlsOptions
    ? createAdaptorServer({
        fetch,
        createServer: (await import("node:https")).createServer,
        serverOptions: { ...serverOptions(), ...tlsOptions },
      })
    : createAdaptorServer({ fetch, serverOptions: serverOptions() });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.listen.port, config.listen.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return server;
}
