/**
 * @module testing/table-writes
 * Counts the statements that write rows into one table, however they go in: a drizzle
 * `insert()`, or on PGlite the COPY that `pgliteCopy` sends through the client under drizzle.
 * Tests that pin batching (one statement per batch, never one per row) count with this.
 */
import type { Database } from "@fleetback/db";
import { getTableName, type Table } from "drizzle-orm";
import { vi } from "vitest";

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
  const copyOf = `copy "${getTableName(table)}" `;
  return {
    count: () =>
      inserts.mock.calls.filter(([target]) => target === table).length +
      (queries?.mock.calls.filter(([text]) => String(text).startsWith(copyOf)).length ?? 0),
    restore() {
      inserts.mockRestore();
      queries?.mockRestore();
    },
  };
}
