/**
 * @module Many rows into one table in one statement whose bind parameters do not grow with its
 * rows: a COPY on PGlite (pglite-copy.ts), on PostgreSQL an INSERT from one text array per column,
 * unnested by the database. Drizzle's multi-row `insert().values()` binds a parameter per column per
 * row and builds each one in JavaScript, which cost more than the database's own work on the rows
 * (issue 19: B3's log lines, ~3× the INSERT's time on PostgreSQL; B5's snapshots).
 *
 * Every value travels as text and is cast to its column's type by the database, so COPY and both
 * drivers take the same rows alike and the caller converts each value once, as it wants it stored.
 */
import { type SQL, sql } from "drizzle-orm";
import { quoteIdentifier } from "./connect.js";
import type { Database } from "./database.js";
import { pgliteCopy } from "./pglite-copy.js";

export interface TextColumn {
  name: string;
  /** The SQL type the text is cast to, written into the statement as it is: never user input. */
  type: string;
}

/** A JavaScript array bound as one parameter (drizzle's `sql` would spread it into a list). */
function textArray(values: readonly string[]): SQL {
  return sql`${sql.param(values)}::text[]`;
}

function unnestInsert(
  table: string,
  columns: readonly TextColumn[],
  rows: readonly (readonly string[])[],
): SQL {
  const names = columns.map((column) => quoteIdentifier(column.name)).join(", ");
  const casts = columns.map((column) => `r.${quoteIdentifier(column.name)}::${column.type}`).join(", ");
  const arrays = columns.map((_, index) => textArray(rows.map((row) => row[index] ?? "")));
  return sql`insert into ${sql.raw(quoteIdentifier(table))} (${sql.raw(names)})
    select ${sql.raw(casts)} from unnest(${sql.join(arrays, sql`, `)}) as r(${sql.raw(names)})`;
}

/**
 * Writes `rows` (one string per column, in `columns`' order, none null) into `table` in one
 * statement. Inside a transaction when `db` is one; a failing row fails the whole statement.
 */
export async function insertTextRows(
  db: Database,
  table: string,
  columns: readonly TextColumn[],
  rows: readonly (readonly string[])[],
): Promise<void> {
  if (rows.length === 0) {
    return;
  }
  const copy = pgliteCopy(db);
  if (copy) {
    await copy(
      table,
      columns.map((column) => column.name),
      rows,
    );
    return;
  }
  await db.execute(unnestInsert(table, columns, rows));
}
