/**
 * @module Throw-away databases for tests, on PGlite or on the PostgreSQL of TEST_DATABASE_URL.
 *
 * Each database is a uniquely named schema, created, migrated and dropped per test. On
 * PostgreSQL that lets parallel test runs share one server; on PGlite it lets a file reuse one
 * instance, because starting PGlite costs seconds while a schema costs milliseconds.
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

/** One PGlite instance or one PostgreSQL server, handing out fresh schemas. */
export interface TestEngine {
  engine: Engine;
  createDatabase(options?: CreateTestDatabaseOptions): Promise<TestDatabase>;
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

async function createPgliteEngine(): Promise<TestEngine> {
  const { PGlite } = await import("@electric-sql/pglite");
  const client: PGlite = await PGlite.create(IN_MEMORY, pgliteOptions(PGlite.defaultStartParams));
  let open: string | undefined;
  return {
    engine: "pglite",
    async createDatabase(options) {
      // One PGlite is one session: two live schemas would fight over search_path.
      if (open !== undefined) {
        throw new Error(`test schema ${open} is still open; close it before creating another`);
      }
      const schema = uniqueSchemaName();
      const quoted = quoteIdentifier(schema);
      await client.exec(`CREATE SCHEMA ${quoted}; SET search_path TO ${quoted}`);
      open = schema;
      const db = await drizzlePglite(client);
      const database: TestDatabase = {
        db,
        engine: "pglite",
        schema,
        pubsub: pglitePubSub(client, schema),
        close: async () => {
          if (open === schema) {
            open = undefined;
            await client.exec(`SET search_path TO public; DROP SCHEMA ${quoted} CASCADE`);
          }
        },
      };
      if (options?.migrated !== false) {
        await migrate(db).catch(async (error: unknown) => {
          await database.close();
          throw error;
        });
      }
      return database;
    },
    close: () => client.close(),
  };
}

async function createPostgresEngine(url: string): Promise<TestEngine> {
  const { default: postgres } = await import("postgres");
  const admin: Sql = postgres(url, { max: 1, onnotice: () => {} });
  return {
    engine: "postgres",
    async createDatabase(options) {
      const schema = uniqueSchemaName();
      const quoted = quoteIdentifier(schema);
      await admin.unsafe(`CREATE SCHEMA ${quoted}`);
      const dropSchema = () => admin.unsafe(`DROP SCHEMA ${quoted} CASCADE`).then(() => {});
      const connection = await connect({ databaseUrl: url, dataDir: IN_MEMORY, schema }).catch(
        async (error: unknown) => {
          await dropSchema();
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
            await dropSchema();
          }
        },
      };
      if (options?.migrated !== false) {
        await migrate(connection.db).catch(async (error: unknown) => {
          await database.close();
          throw error;
        });
      }
      return database;
    },
    close: () => admin.end({ timeout: 5 }),
  };
}
