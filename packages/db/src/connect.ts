/**
 * @module Opens the database: embedded PGlite in the data dir by default, PostgreSQL through
 * postgres.js when a `DATABASE_URL` is configured. Both come back as the same `Database` type.
 *
 * Each engine's driver is imported only when chosen, so a PostgreSQL deployment never loads
 * the PGlite WebAssembly and vice versa.
 */
import { mkdir } from "node:fs/promises";
import { resolve } from "node:path";
import type { PGlite } from "@electric-sql/pglite";
import { sql } from "drizzle-orm";
import type { Sql } from "postgres";
import type { Database } from "./database.js";
import type { Migration } from "./migrate.js";
import { type CreatedDataDir, createPgliteDataDir, isPgliteDataDir } from "./pglite-create.js";
import { type PubSub, pglitePubSub, postgresPubSub } from "./pubsub.js";
import { redactDatabaseUrl, scrubPassword } from "./redact.js";
import * as schema from "./schema/index.js";

export type Engine = "pglite" | "postgres";

/** `dataDir` of "memory://" keeps PGlite in memory (tests, throw-away runs). */
export const IN_MEMORY = "memory://";

export interface ConnectConfig {
  /** A PostgreSQL URL; unset means embedded PGlite. */
  databaseUrl?: string | undefined;
  /** The server's data dir; PGlite lives in `<dataDir>/pglite`. */
  dataDir: string;
  /** search_path to use (tests give each run its own schema); the schema must exist. */
  schema?: string | undefined;
  /**
   * Applied by the child process that creates a new PGlite data dir (pglite-create.ts), so that
   * this process's WASM memory never grows by a first migration; ignored otherwise.
   */
  migrations?: readonly Migration[] | undefined;
}

export interface Connection {
  db: Database;
  engine: Engine;
  /** LISTEN/NOTIFY in this connection's schema (the cluster hub and job events of replicas). */
  pubsub: PubSub;
  /** Resolves once the database answers a trivial query; rejects otherwise (for /readyz). */
  ping(): Promise<void>;
  /** Closes the pool or the embedded instance; safe to call twice. */
  close(): Promise<void>;
  /** Set when this connect made the embedded data dir (a first start): from the template or initdb. */
  created?: CreatedDataDir;
}

/** The database could not be opened; the message never contains a password. */
export class DatabaseConnectError extends Error {
  override readonly name = "DatabaseConnectError";
  /** The driver's error code (e.g. ECONNREFUSED, 3D000), when it gave one. */
  readonly code: string | undefined;

  constructor(message: string, code: string | undefined) {
    super(message);
    this.code = code;
  }
}

export async function connect(config: ConnectConfig): Promise<Connection> {
  if (config.databaseUrl) {
    return connectPostgres(config.databaseUrl, config.schema);
  }
  return connectPglite(config.dataDir, config.schema, config.migrations ?? []);
}

/** Wraps an open PGlite in the shared `Database` type. */
export async function drizzlePglite(client: PGlite): Promise<Database> {
  const { drizzle } = await import("drizzle-orm/pglite");
  return drizzle({ client, schema });
}

/** Wraps a postgres.js pool in the shared `Database` type. */
export async function drizzlePostgres(client: Sql): Promise<Database> {
  const { drizzle } = await import("drizzle-orm/postgres-js");
  return drizzle({ client, schema });
}

/** Double-quotes an identifier; refuses anything but plain lower-case names. */
export function quoteIdentifier(name: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) {
    throw new TypeError(`not a plain lower-case SQL identifier: ${JSON.stringify(name)}`);
  }
  return `"${name}"`;
}

/**
 * PGlite's build default is PostgreSQL's 128 MB of shared buffers, and its WASM heap never gives
 * memory back, so an idle server held ~300 MiB for the database alone (issue 19, budget B8). The
 * embedded database serves one server's tables, whose working set is a few MB; the pages it does
 * not keep are one read from the OS page cache away. Both the first start's initdb and every
 * start run with the smaller setting.
 */
export const PGLITE_SHARED_BUFFERS = "16MB";

export function pgliteOptions(defaults: readonly string[]): { startParams: string[] } {
  return { startParams: [...defaults, "-c", `shared_buffers=${PGLITE_SHARED_BUFFERS}`] };
}

/**
 * Creates the embedded database of `dataDir` (`<dataDir>/pglite`) as a first start does, initdb
 * and `migrations` in a child process, unless it exists; opens nothing in this process. Says how
 * it made the dir, or undefined when the dir was there.
 */
export async function createEmbeddedDatabase(
  dataDir: string,
  migrations: readonly Migration[],
): Promise<CreatedDataDir | undefined> {
  const location = resolve(dataDir, "pglite");
  const { PGlite } = await import("@electric-sql/pglite");
  await mkdir(location, { recursive: true });
  if (isPgliteDataDir(location)) {
    return undefined;
  }
  return createPgliteDataDir(location, pgliteOptions(PGlite.defaultStartParams).startParams, migrations);
}

async function connectPglite(
  dataDir: string,
  searchPath: string | undefined,
  migrations: readonly Migration[],
): Promise<Connection> {
  const location = dataDir === IN_MEMORY ? IN_MEMORY : resolve(dataDir, "pglite");
  let client: PGlite;
  let created: CreatedDataDir | undefined;
  try {
    const { PGlite } = await import("@electric-sql/pglite");
    const options = pgliteOptions(PGlite.defaultStartParams);
    if (location !== IN_MEMORY) {
      created = await createEmbeddedDatabase(dataDir, migrations);
    }
    client = await PGlite.create(location, options);
    if (searchPath !== undefined) {
      await client.exec(`SET search_path TO ${quoteIdentifier(searchPath)}`);
    }
  } catch (error) {
    throw new DatabaseConnectError(
      `could not open the embedded database in ${location}: ${messageOf(error)}`,
      codeOf(error),
    );
  }
  return openConnection(
    {
      db: await drizzlePglite(client),
      engine: "pglite",
      pubsub: pglitePubSub(client, searchPath ?? "public"),
      ...(created === undefined ? {} : { created }),
    },
    () => client.close(),
  );
}

async function connectPostgres(url: string, searchPath: string | undefined): Promise<Connection> {
  const where = redactDatabaseUrl(url);
  let client: Sql | undefined;
  try {
    const { default: postgres } = await import("postgres");
    client = postgres(url, {
      max: 10,
      connect_timeout: 10,
      // Notices (e.g. "relation already exists, skipping") are not operator news.
      onnotice: () => {},
      connection: {
        application_name: "fleetback",
        ...(searchPath === undefined ? {} : { search_path: quoteIdentifier(searchPath) }),
      },
    });
    // postgres.js connects lazily; fail here, at start-up, rather than on the first request.
    await client`select 1`;
  } catch (error) {
    await client?.end({ timeout: 0 }).catch(() => {});
    throw new DatabaseConnectError(
      `could not connect to PostgreSQL at ${where}: ${scrubPassword(messageOf(error), url)}`,
      codeOf(error),
    );
  }
  const pool = client;
  return openConnection(
    {
      db: await drizzlePostgres(pool),
      engine: "postgres",
      pubsub: postgresPubSub(pool, searchPath ?? "public"),
    },
    () => pool.end({ timeout: 5 }),
  );
}

/** The Connection over an open client of either engine; `end` runs on the first close only. */
function openConnection(opened: Omit<Connection, "ping" | "close">, end: () => Promise<void>): Connection {
  let closed = false;
  return {
    ...opened,
    ping: async () => {
      await opened.db.execute(sql`select 1`);
    },
    close: async () => {
      if (!closed) {
        closed = true;
        await end();
      }
    },
  };
}

function messageOf(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) {
    return error.errors.map(messageOf).join("; ");
  }
  return error instanceof Error ? error.message : String(error);
}

function codeOf(error: unknown): string | undefined {
  if (typeof error === "object" && error !== null && "code" in error && typeof error.code === "string") {
    return error.code;
  }
  return undefined;
}
