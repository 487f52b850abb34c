/**
 * @module server
 * Start-up sequence of main.ts (and of tests of a whole start): data dir, key file, database,
 * migrations, listening socket, then the runtime (runtime.ts) on it. Each step that can fail for
 * an operator's reason fails with a StartupError whose message is one line naming what to fix.
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { loadOrCreateKey, loadOrCreateSigningKey, type SigningKeyPair } from "@fleetback/crypto";
import { type Connection, connect, loadMigrations, migrate, redactDatabaseUrl } from "@fleetback/db";
import { createViews, loadStaticAssets } from "@fleetback/web";
import { importShippedBundle } from "./agent-artifacts/agent-bundle.js";
import { type BundleStore, createBundleStore } from "./agent-artifacts/bundle-store.js";
import { importRelease } from "./agent-artifacts/release-import.js";
import { createBootstrapState } from "./auth/bootstrap.js";
import { type Clock, systemClock } from "./clock.js";
import { type Cluster, startCluster } from "./cluster.js";
import { type Config, listenUrl } from "./config.js";
import { type Listening, listen } from "./http/listen.js";
import { plainHttpWarning } from "./http/plain-http.js";
import { createLocalHub } from "./hub/local-hub.js";
import { createIds } from "./ids.js";
import { createInProcessJobEvents } from "./jobs/in-process-job-events.js";
import type { Logger } from "./log.js";
import { createNotifier } from "./notifications/notifier.js";
import { startRuntime } from "./runtime.js";

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
    database = await connect({
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
      // A new embedded data dir is migrated by the child that creates it (issue 19, B8).
      migrations: config.databaseUrl ? undefined : await loadMigrations(),
    });
    await database.ping();
  });
  if (!database) {
    throw new StartupError(`cannot open database ${where}`);
  }
  const db = database;
  if (db.created) {
    // A first start: whether the build's template made the dir, or initdb because it could not.
    const { from, templateRefused } = db.created;
    if (templateRefused === undefined) {
      log.info({ from, data_dir: config.dataDir }, "embedded database created");
    } else {
      log.warn(
        { from, template_refused: templateRefused },
        "embedded database created by initdb: the template did not load",
      );
    }
  }
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
  // Pages print moments in FLEETBACK_TZ until the reader's browser puts them in its own zone.
  const views = createViews({
    assets: loadStaticAssets(),
    now: () => clock.now(),
    timeZone: config.timeZone,
  });
  let listening: Listening;
  try {
    listening = await listen({ ...config.listen, tls: config.tls });
  } catch (err) {
    await db.close().catch(() => undefined);
    const reason = err instanceof Error ? err.message : String(err);
    throw new StartupError(`cannot listen on ${config.listen.host}:${config.listen.port}: ${reason}`, {
      cause: err,
    });
  }
  const url = listenUrl({ host: config.listen.host, port: listening.port }, config.tls !== undefined);
  const baseUrl =
    config.listen.port === 0 && config.baseUrl === listenUrl(config.listen, config.tls !== undefined)
      ? url
      : config.baseUrl;
  const runtimeConfig: Config = Object.freeze({ ...config, baseUrl });

  const notifier = createNotifier({ db: db.db, keys: { secret }, log, clock, config: runtimeConfig });
  const ids = createIds();
  // On PostgreSQL every server is a replica: a second one started on the same database just works.
  // PGlite is one process's own database, so its hub stays in process.
  let cluster: Cluster | undefined;
  if (db.engine === "postgres") {
    try {
      cluster = await startCluster({ db: db.db, pubsub: db.pubsub, ids, log });
    } catch (err) {
      await notifier.close();
      await new Promise<void>((resolve) => listening.server.close(() => resolve()));
      await db.close().catch(() => undefined);
      throw new StartupError(
        `cannot join the replicas on ${where}: ${err instanceof Error ? err.message : String(err)}`,
        {
          cause: err,
        },
      );
    }
  }
  const runtime = startRuntime(
    listening,
    {
      config: runtimeConfig,
      db: db.db,
      log,
      clock,
      ids,
      keys: { secret },
      releaseKey,
      agentBundles,
      hub: cluster?.hub ?? createLocalHub(),
      jobEvents: cluster?.jobEvents ?? createInProcessJobEvents(),
      views,
      notifier,
      bootstrap,
      readiness: {
        check: async () => {
          await db.ping();
          return { database: db.engine };
        },
      },
    },
    {
      release: async () => {
        await cluster?.close();
        await notifier.close();
        await db.close();
      },
    },
  );
  const plainHttp = plainHttpWarning(baseUrl);
  if (plainHttp) {
    log.warn({ base_url: baseUrl }, plainHttp);
  }
  return { url, baseUrl, bootstrapToken: bootstrap.token, database: db, close: runtime.close };
}
