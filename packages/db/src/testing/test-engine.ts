/**
 * @module Throw-away databases for tests, on PGlite or on the PostgreSQL of TEST_DATABASE_URL.
 *
 * Each database is a uniquely named schema. On PostgreSQL that lets parallel test runs share one
 * server; on PGlite it lets a test process reuse one instance, because starting PGlite costs
 * seconds (13 s on a loaded machine) while a schema costs milliseconds. A migrated schema a test
 * is done with is emptied and handed to the next test under a new name (schema-recycling.ts), so
 * a file migrates once per engine, not once per test. Tests take their engines from
 * `sharedTestEngine`, which lives as long as the test process; `closeSharedTestEngines` (a setup
 * file's afterAll) drops the spare schemas and stops the engines.
 */
import { randomBytes } from "node:crypto";
import type { PGlite } from "@electric-sql/pglite";
import type { Sql } from "postgres";
import {
  connect,
  drizzlePglite,
  type Engine,
  IN_MEMORY,
  pgliteOptions,
  quoteIdentifier,
} from "../connect.js";
import type { Database } from "../database.js";
import { migrate } from "../migrate.js";
import { type PubSub, pglitePubSub } from "../pubsub.js";
import { startFromTemplate, TEMPLATE_SCHEMA } from "./pglite-template.js";
import { emptyForReuse, type MigratedShape, type RunSql, readMigratedShape } from "./schema-recycling.js";

export interface TestDatabase {
  db: Database;
  engine: Engine;
  /** The schema (search_path) this database lives in. */
  schema: string;
  /** LISTEN/NOTIFY namespaced to this schema. */
  pubsub: PubSub;
  /** Drops the schema and releases the connection. */
  close(): Promise<void>;
}

export interface CreateTestDatabaseOptions {
  /** Apply the migrations (default true); false gives an empty schema. */
  migrated?: boolean;
}

/** PGlite instances or one PostgreSQL server, handing out fresh schemas. */
export interface TestEngine {
  engine: Engine;
  createDatabase(options?: CreateTestDatabaseOptions): Promise<TestDatabase>;
  /** Drops the spare schemas and stops the engine; databases still open are left to their owners. */
  close(): Promise<void>;
}

/** PGlite always; PostgreSQL too when TEST_DATABASE_URL is set. */
export function testEngines(): Engine[] {
  return process.env.TEST_DATABASE_URL ? ["pglite", "postgres"] : ["pglite"];
}

/** Test title suffix that says why a PostgreSQL-only test was skipped; "" when it runs. */
export function postgresNote(): string {
  return process.env.TEST_DATABASE_URL ? "" : " (skipped: TEST_DATABASE_URL not set; no PostgreSQL)";
}

export function testDatabaseUrl(): string {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) {
    throw new Error("TEST_DATABASE_URL is not set; PostgreSQL tests cannot run");
  }
  return url;
}

export function uniqueSchemaName(): string {
  return `fb_test_${Date.now().toString(36)}_${randomBytes(5).toString("hex")}`;
}

export async function createTestEngine(engine: Engine): Promise<TestEngine> {
  return engine === "pglite" ? createPgliteEngine() : createPostgresEngine(testDatabaseUrl());
}

/** A single database for code outside vitest (scripts, benches); `close()` ends everything. */
export async function createTestDatabase(
  engine: Engine,
  options?: CreateTestDatabaseOptions,
): Promise<TestDatabase> {
  const handle = await createTestEngine(engine);
  try {
    const database = await handle.createDatabase(options);
    return {
      ...database,
      close: async () => {
        try {
          await database.close();
        } finally {
          await handle.close();
        }
      },
    };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

const shared = new Map<Engine, Promise<TestEngine>>();

/**
 * The engine every test of this process shares (created on first use). Its databases are closed
 * by their tests; the engine itself only by `closeSharedTestEngines`.
 */
export function sharedTestEngine(engine: Engine): Promise<TestEngine> {
  let handle = shared.get(engine);
  if (!handle) {
    handle = createTestEngine(engine);
    shared.set(engine, handle);
    // A failed start is not remembered: the next test tries again and reports its own error.
    handle.catch(() => shared.delete(engine));
  }
  return handle;
}

/** Stops the shared engines (vitest setup files call it in afterAll). */
export async function closeSharedTestEngines(): Promise<void> {
  const handles = [...shared.values()];
  shared.clear();
  await Promise.all(handles.map(async (handle) => (await handle.catch(() => undefined))?.close()));
}

/** A database of the shared engine, for a test that needs one outside runDbSuite. */
export async function openTestDatabase(
  engine: Engine,
  options?: CreateTestDatabaseOptions,
): Promise<TestDatabase> {
  return (await sharedTestEngine(engine)).createDatabase(options);
}

/**
 * Hands out schemas on one engine: a spare migrated schema renamed when there is one, a new one
 * otherwise; takes them back emptied when they can be reused, dropped when not.
 */
class SchemaPool {
  private readonly spares: string[] = [];
  private shape: MigratedShape | undefined;

  constructor(private readonly run: RunSql) {}

  /** A schema, created or reused, and whether it is already migrated. */
  async take(migrated: boolean): Promise<{ schema: string; reused: boolean }> {
    const schema = uniqueSchemaName();
    const spare = migrated ? this.spares.pop() : undefined;
    if (spare !== undefined) {
      await this.run(`ALTER SCHEMA ${quoteIdentifier(spare)} RENAME TO ${quoteIdentifier(schema)}`);
      return { schema, reused: true };
    }
    await this.run(`CREATE SCHEMA ${quoteIdentifier(schema)}`);
    return { schema, reused: false };
  }

  /** Notes a newly migrated schema's shape, the first time one is seen. */
  async migrated(schema: string): Promise<void> {
    this.shape ??= await readMigratedShape(this.run, schema);
  }

  /** Takes a migrated schema made elsewhere (the PGlite template's) as a spare. */
  async adopt(schema: string): Promise<void> {
    await this.migrated(schema);
    this.spares.push(schema);
  }

  async give(schema: string, migrated: boolean): Promise<void> {
    if (migrated && this.shape && (await emptyForReuse(this.run, schema, this.shape))) {
      this.spares.push(schema);
      return;
    }
    await this.drop(schema);
  }

  async drop(schema: string): Promise<void> {
    await this.run(`DROP SCHEMA IF EXISTS ${quoteIdentifier(schema)} CASCADE`);
  }

  async dropSpares(): Promise<void> {
    for (const schema of this.spares.splice(0)) {
      await this.drop(schema);
    }
  }
}

/** Migrates a new schema (or trusts a reused one), closing the database when that fails. */
async function prepared(
  database: TestDatabase,
  pool: SchemaPool,
  reused: boolean,
  migrated: boolean,
): Promise<TestDatabase> {
  if (!migrated || reused) {
    return database;
  }
  try {
    await migrate(database.db);
    await pool.migrated(database.schema);
    return database;
  } catch (error) {
    await database.close();
    throw error;
  }
}

/** One PGlite instance is one session: each open database holds one; more start as needed. */
interface PgliteSession {
  client: PGlite;
  pool: SchemaPool;
  busy: boolean;
}

async function createPgliteEngine(): Promise<TestEngine> {
  const { PGlite } = await import("@electric-sql/pglite");
  const sessions: PgliteSession[] = [];
  const startSession = async (): Promise<PgliteSession> => {
    const { client, templated } = await startFromTemplate(PGlite, pgliteOptions(PGlite.defaultStartParams));
    const run: RunSql = async (text, params) =>
      params
        ? (await client.query<Record<string, unknown>>(text, params)).rows
        : lastRows(await client.exec(text));
    const session = { client, pool: new SchemaPool(run), busy: false };
    if (templated) {
      await session.pool.adopt(TEMPLATE_SCHEMA);
    }
    sessions.push(session);
    return session;
  };
  // The first session starts with the engine, so a test's first database costs only its schema.
  await startSession();
  return {
    engine: "pglite",
    async createDatabase(options) {
      const migrated = options?.migrated !== false;
      const session = sessions.find((candidate) => !candidate.busy) ?? (await startSession());
      session.busy = true;
      const { client, pool } = session;
      let taken: { schema: string; reused: boolean };
      try {
        taken = await pool.take(migrated);
        await client.exec(`SET search_path TO ${quoteIdentifier(taken.schema)}`);
      } catch (error) {
        session.busy = false;
        throw error;
      }
      const { schema, reused } = taken;
      let closed = false;
      const database: TestDatabase = {
        db: await drizzlePglite(client),
        engine: "pglite",
        schema,
        pubsub: pglitePubSub(client, schema),
        close: async () => {
          if (closed) {
            return;
          }
          closed = true;
          try {
            // A test's session settings and advisory locks must not reach the next test.
            await client.exec("RESET ALL; SELECT pg_advisory_unlock_all()");
            await pool.give(schema, migrated);
            session.busy = false;
          } catch {
            // A session that cannot be cleaned is not handed out again.
            sessions.splice(sessions.indexOf(session), 1);
            await client.close().catch(() => {});
          }
        },
      };
      return prepared(database, pool, reused, migrated);
    },
    async close() {
      for (const session of sessions.splice(0)) {
        await session.client.close().catch(() => {});
      }
    },
  };
}

function lastRows(results: Array<{ rows: Record<string, unknown>[] }>): Record<string, unknown>[] {
  return results.at(-1)?.rows ?? [];
}

async function createPostgresEngine(url: string): Promise<TestEngine> {
  const { default: postgres } = await import("postgres");
  const admin: Sql = postgres(url, { max: 1, onnotice: () => {} });
  const run: RunSql = async (text, params) =>
    params
      ? [...(await admin.unsafe<Record<string, unknown>[]>(text, params as never[]))]
      : [...(await admin.unsafe<Record<string, unknown>[]>(text).simple())];
  const pool = new SchemaPool(run);
  return {
    engine: "postgres",
    async createDatabase(options) {
      const migrated = options?.migrated !== false;
      const { schema, reused } = await pool.take(migrated);
      const connection = await connect({ databaseUrl: url, dataDir: IN_MEMORY, schema }).catch(
        async (error: unknown) => {
          await pool.drop(schema);
          throw error;
        },
      );
      let closed = false;
      const database: TestDatabase = {
        db: connection.db,
        engine: "postgres",
        schema,
        pubsub: connection.pubsub,
        close: async () => {
          if (!closed) {
            closed = true;
            await connection.close();
            await pool.give(schema, migrated);
          }
        },
      };
      return prepared(database, pool, reused, migrated);
    },
    async close() {
      await pool.dropSpares();
      await admin.end({ timeout: 5 });
    },
  };
}
