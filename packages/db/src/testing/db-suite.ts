/**
 * @module `runDbSuite`: one database test suite, run on every available engine.
 *
 * PGlite always; PostgreSQL as well when TEST_DATABASE_URL is set. Every test gets an empty
 * migrated schema of its own (a fresh one, or one an earlier test emptied and gave back), so
 * tests never see each other's rows. Never mock the ORM.
 */
import { afterEach, beforeAll, beforeEach, describe } from "vitest";
import type { Engine } from "../connect.js";
import type { Database } from "../database.js";
import {
  type CreateTestDatabaseOptions,
  sharedTestEngine,
  type TestDatabase,
  type TestEngine,
  testEngines,
} from "./test-engine.js";

export interface DbSuiteContext {
  engine: Engine;
  /** The whole test database (schema name, close) for the rare test that needs more than `db`. */
  current(): TestDatabase;
}

/**
 * Defines `describe("<name> (<engine>)")` per engine; inside `define`, `getDb()` returns the
 * current test's database. Tests of one suite run sequentially (PGlite is one session).
 * `options.migrated: false` hands out empty schemas (for tests of the migrations themselves).
 */
export function runDbSuite(
  name: string,
  define: (getDb: () => Database, context: DbSuiteContext) => void,
  options: CreateTestDatabaseOptions = {},
): void {
  for (const engine of testEngines()) {
    describe(`${name} (${engine})`, () => {
      let handle: TestEngine | undefined;
      let database: TestDatabase | undefined;

      // A guard against a hang, not a time budget: on a 2-core machine running the server and
      // end-to-end suites beside this one, starting PGlite and migrating took over two minutes.
      beforeAll(async () => {
        handle = await sharedTestEngine(engine);
      }, 300_000);
      beforeEach(async () => {
        if (!handle) {
          throw new Error(`the ${engine} test engine did not start`);
        }
        database = await handle.createDatabase(options);
      }, 180_000);
      afterEach(async () => {
        await database?.close();
        database = undefined;
      });

      const current = (): TestDatabase => {
        if (!database) {
          throw new Error("getDb() is only available inside a test of runDbSuite");
        }
        return database;
      };
      define(() => current().db, { engine, current });
    });
  }
}
