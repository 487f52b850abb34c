/**
 * @module @fleetback/db: drizzle schema, numbered SQL migrations, and a connection to PGlite or
 * PostgreSQL behind one `Database` type.
 */
export {
  type AdvisoryLockOutcome,
  acquireAdvisoryXactLock,
  advisoryLockKey,
  withAdvisoryLock,
} from "./advisory-lock.js";
export {
  type ConnectConfig,
  type Connection,
  connect,
  createEmbeddedDatabase,
  DatabaseConnectError,
  type Engine,
  IN_MEMORY,
  PGLITE_SHARED_BUFFERS,
  pgliteOptions,
} from "./connect.js";
export { type Database, executeRows, type Schema, type Transaction } from "./database.js";
export { isPostgresWriteAfterClose } from "./driver-quirks.js";
export * from "./errors.js";
export {
  loadMigrations,
  MIGRATIONS_DIR,
  MIGRATIONS_TABLE,
  type MigrateOptions,
  type Migration,
  MigrationError,
  type MigrationReport,
  migrate,
} from "./migrate.js";
export { copyTextField, type PgliteCopy, pgliteCopy } from "./pglite-copy.js";
export { channelName, NOTIFY_PAYLOAD_LIMIT, type PubSub } from "./pubsub.js";
export { redactDatabaseUrl } from "./redact.js";
export * from "./schema/index.js";
export { insertTextRows, type TextColumn } from "./text-rows.js";
export { type UpkeepOptions, type UpkeepReport, upkeep } from "./upkeep.js";
export { withoutTriggers } from "./without-triggers.js";
