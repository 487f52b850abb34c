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

const dialect = new PgDialect();

export interface TableWrites {
  count(): number;
  restore(): void;
}

/** Counts, on `target` (a database or a transaction), the statements that write into `table`. */
function watch(target: Database, table: Table, counted: () => void): void {
  const copyOf = `copy "${getTableName(table)}" `;
  const insertInto = `insert into "${getTableName(table)}" `;
  const insert = target.insert.bind(target);
  Reflect.set(target, "insert", (into: Table) => {
    if (into === table) {
      counted();
    }
    return insert(into as never);
  });
  const execute = target.execute.bind(target);
  Reflect.set(target, "execute", (query: SQL) => {
    if (dialect.sqlToQuery(query).sql.startsWith(insertInto)) {
      counted();
    }
    return execute(query);
  });
  const client: unknown = Reflect.get(target._.session, "client");
  if (typeof client === "object" && client !== null && typeof Reflect.get(client, "query") === "function") {
    const query = (Reflect.get(client, "query") as (...args: unknown[]) => unknown).bind(client);
    Reflect.set(client, "query", (text: unknown, ...rest: unknown[]) => {
      if (String(text).startsWith(copyOf)) {
        counted();
      }
      return query(text, ...rest);
    });
  }
}

export function spyOnTableWrites(db: Database, table: Table): TableWrites {
  let count = 0;
  const counted = () => {
    count += 1;
  };
  // The methods are replaced on the objects themselves and put back by restore(); transactions
  // begun meanwhile are watched too (the job log writer inserts inside one).
  const own = ["insert", "execute", "transaction"] as const;
  const saved = own.map((name) => [name, Reflect.getOwnPropertyDescriptor(db, name)] as const);
  const client: unknown = Reflect.get(db._.session, "client");
  const savedQuery =
    typeof client === "object" && client !== null
      ? Reflect.getOwnPropertyDescriptor(client, "query")
      : undefined;
  watch(db, table, counted);
  const transaction = db.transaction.bind(db);
  Reflect.set(db, "transaction", (work: (tx: Database) => Promise<unknown>, config?: never) =>
    transaction(async (tx) => {
      watch(tx as unknown as Database, table, counted);
      return work(tx as unknown as Database);
    }, config),
  );
  return {
    count: () => count,
    restore() {
      for (const [name, descriptor] of saved) {
        if (descriptor) {
          Reflect.defineProperty(db, name, descriptor);
        } else {
          Reflect.deleteProperty(db, name);
        }
      }
      if (typeof client === "object" && client !== null) {
        if (savedQuery) {
          Reflect.defineProperty(client, "query", savedQuery);
        } else {
          Reflect.deleteProperty(client, "query");
        }
      }
    },
  };
}
