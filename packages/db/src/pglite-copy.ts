/**
 * @module Many rows into a table on PGlite by COPY, inside the caller's drizzle transaction.
 *
 * PGlite runs PostgreSQL in WebAssembly, where COPY reading rows as text costs markedly less than
 * an INSERT of the same rows bound as arrays (issue 19, B5: 10,000 snapshots, ~20 % of the write).
 * PGlite's COPY reads a Blob given with the query, an option of its own API that drizzle does not
 * pass on, so this reaches for the client under drizzle's session. When that client is not PGlite
 * (postgres.js, or a drizzle that no longer keeps it there) there is no copier and the caller
 * INSERTs as before: slower, never wrong. COPY from the server's side needs a superuser, which
 * PGlite's one user is.
 */
import { quoteIdentifier } from "./connect.js";
import type { Database } from "./database.js";

/** Writes `rows` (one string per column, or null for SQL NULL) into `table`'s `columns`. */
export type PgliteCopy = (
  table: string,
  columns: readonly string[],
  rows: readonly (readonly (string | null)[])[],
) => Promise<void>;

interface PgliteQueries {
  query(sql: string, params: unknown[], options: { blob: Blob }): Promise<unknown>;
  exec(sql: string): Promise<unknown>;
}

/** PGlite and its transaction answer `query` and `exec`; postgres.js's `sql` has neither. */
function isPgliteQueries(value: unknown): value is PgliteQueries {
  return (
    (typeof value === "object" || typeof value === "function") &&
    value !== null &&
    typeof Reflect.get(value, "query") === "function" &&
    typeof Reflect.get(value, "exec") === "function"
  );
}

/** COPY's text format: these four would end a field or a row, or start an escape. */
const COPY_SPECIAL = /[\\\t\n\r]/g;
const HAS_COPY_SPECIAL = /[\\\t\n\r]/;
const COPY_ESCAPES: Readonly<Record<string, string>> = {
  "\\": "\\\\",
  "\t": "\\t",
  "\n": "\\n",
  "\r": "\\r",
};

export function copyTextField(value: string): string {
  // Most fields (ids, times, numbers) need nothing; testing first spares them a replace.
  return HAS_COPY_SPECIAL.test(value)
    ? value.replace(COPY_SPECIAL, (special) => COPY_ESCAPES[special] ?? special)
    : value;
}

/** The copier for `db` (a database or a transaction) when it runs on PGlite; undefined otherwise. */
export function pgliteCopy(db: Database): PgliteCopy | undefined {
  const client: unknown = Reflect.get(db._.session, "client");
  if (!isPgliteQueries(client)) {
    return undefined;
  }
  return async (table, columns, rows) => {
    if (rows.length === 0) {
      return;
    }
    const text = rows
      .map((row) => row.map((field) => (field === null ? "\\N" : copyTextField(field))).join("\t"))
      .join("\n");
    const target = `${quoteIdentifier(table)} (${columns.map(quoteIdentifier).join(", ")})`;
    await client.query(`copy ${target} from '/dev/blob'`, [], { blob: new Blob([text, "\n"]) });
  };
}
