/**
 * @module @fleetback/db/testing: real databases for tests of any package (vitest required).
 */
export { type DbSuiteContext, runDbSuite } from "./db-suite.js";
export { terminateBackendsRunning } from "./terminate-backend.js";
export {
  type CreateTestDatabaseOptions,
  closeSharedTestEngines,
  createTestDatabase,
  createTestEngine,
  openTestDatabase,
  postgresNote,
  sharedTestEngine,
  type TestDatabase,
  type TestEngine,
  testDatabaseUrl,
  testEngines,
} from "./test-engine.js";
