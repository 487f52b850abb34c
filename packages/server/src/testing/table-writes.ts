/**
 * @module testing/table-writes
 * Counts the statements that write rows into one table, however they go in: a drizzle
 * `insert()`, on PGlite the COPY that `pgliteCopy` sends through the client under drizzle, or an
 * INSERT that `execute` runs (insertTextRows' arrays unnested on PostgreSQL). Tests that pin
 * batching (one statement per batch, never one per row) count with this.
 */
import type { Database } from "@fleetback/db";
import { getTableName, type SQL, type Table } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import { vi } from "vitest";

const dialect = new PgDialect();

export interface TableWrites {
  count(): number;
  restore(): void;
}

export function spyOnTableWrites(db: Database, table: Table): TableWrites {
  const inserts = vi.spyOn(db, "insert");
  const client: unknown = Reflect.get(db._.session, "client");
  const queries =
    typeof client === "object" && client !== null && typeof Reflect.get(client, "query") === "function"
      ? vi.spyOn(client as { query: (...args: unknown[]) => unknown }, "query")
      : undefined;
  const executes = vi.spyOn(db, "execute");
  const copyOf = `copy "${getTableName(table)}" `;
  const insertInto = `insert into "${getTableName(table)}" `;
  const total = () =>
    inserts.mock.calls.filter(([target]) => target === table).length +
    (queries?.mock.calls.filter(([text]) => String(text).startsWith(copyOf)).length ?? 0) +
    executes.mock.calls.filter(([query]) => dialect.sqlToQuery(query as SQL).sql.startsWith(insertInto))
      .length;
  // A spy on a method already spied is the same spy, with the calls of earlier tests on the
  // suite's database: count from here.
  const before = total();
  return {
    count: () => total() - before,
    restore() {
      inserts.mockRestore();
      queries?.mockRestore();
      executes.mockRestore();
    },
  };
}
