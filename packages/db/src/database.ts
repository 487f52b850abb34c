/**
 * @module The one database type server code sees, whichever engine is underneath.
 *
 * PGlite and postgres.js give drizzle databases that differ only in the raw result type of
 * `db.execute`; typing both as the common `PgDatabase` base keeps every query builder and
 * `transaction` fully typed, and `executeRows` papers over the one difference.
 */
import type { ExtractTablesWithRelations, SQLWrapper } from "drizzle-orm";
import type { PgDatabase, PgQueryResultHKT, PgTransaction } from "drizzle-orm/pg-core";
import type * as schema from "./schema/index.js";

export type Schema = typeof schema;

/** A drizzle database over the Fleetback schema, on PGlite or PostgreSQL. */
export type Database = PgDatabase<PgQueryResultHKT, Schema>;

/** The `tx` of `db.transaction(...)`; also usable wherever a `Database` is expected. */
export type Transaction = PgTransaction<PgQueryResultHKT, Schema, ExtractTablesWithRelations<Schema>>;

/**
 * Runs raw SQL and returns its rows on either engine (postgres.js answers an array, PGlite an
 * object with `rows`). Column values come back as the driver parsed them: use the query builder
 * when typed mapping (dates, bigint as number) matters.
 */
export async function executeRows<Row extends Record<string, unknown>>(
  db: Database,
  query: SQLWrapper | string,
): Promise<Row[]> {
  const result: unknown = await db.execute(query);
  if (Array.isArray(result)) {
    return result as Row[];
  }
  if (typeof result === "object" && result !== null && "rows" in result && Array.isArray(result.rows)) {
    return result.rows as Row[];
  }
  throw new TypeError("db.execute returned neither an array nor an object with rows");
}
