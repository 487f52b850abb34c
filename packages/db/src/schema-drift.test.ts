/**
 * The TypeScript schema and the SQL migrations describe the same tables twice; this compares
 * the drizzle definitions with the catalog of a freshly migrated database so they cannot drift.
 */
import { is } from "drizzle-orm";
import { getTableConfig, PgTable } from "drizzle-orm/pg-core";
import { expect, it } from "vitest";
import { executeRows } from "./database.js";
import { MIGRATIONS_TABLE } from "./migrate.js";
import * as schema from "./schema/index.js";
import { runDbSuite } from "./testing/db-suite.js";

const exported: unknown[] = Object.values(schema);
const tables = exported.filter((value): value is PgTable => is(value, PgTable));
const configs = tables.map((table) => getTableConfig(table));
const ON_DELETE: Record<string, string> = {
  a: "no action",
  r: "restrict",
  c: "cascade",
  n: "set null",
  d: "set default",
};

function sorted(values: string[]): string[] {
  return [...values].sort();
}

runDbSuite("schema drift between drizzle and migrations", (getDb) => {
  it("has exactly the drizzle tables", async () => {
    const rows = await executeRows<{ name: string }>(
      getDb(),
      `select table_name as name from information_schema.tables
        where table_schema = current_schema() and table_type = 'BASE TABLE'`,
    );
    const inDb = rows.map((row) => row.name).filter((name) => name !== MIGRATIONS_TABLE);
    expect(sorted(inDb)).toEqual(sorted(configs.map((config) => config.name)));
  });

  it("has the same columns, types, nullability and default presence", async () => {
    const rows = await executeRows<{
      table: string;
      column: string;
      type: string;
      nullable: string;
      has_default: boolean;
    }>(
      getDb(),
      `select table_name as table, column_name as column, data_type as type, is_nullable as nullable,
              (column_default is not null or is_identity = 'YES') as has_default
         from information_schema.columns where table_schema = current_schema()`,
    );
    for (const config of configs) {
      const inDb = rows
        .filter((row) => row.table === config.name)
        .map(
          (row) =>
            `${row.column} ${row.type}${row.nullable === "NO" ? " not null" : ""}${row.has_default ? " default" : ""}`,
        );
      const inDrizzle = config.columns.map(
        (column) =>
          `${column.name} ${column.getSQLType()}${column.notNull ? " not null" : ""}${column.hasDefault ? " default" : ""}`,
      );
      expect(sorted(inDb), config.name).toEqual(sorted(inDrizzle));
    }
  });

  it("has the same primary keys, foreign keys with their ON DELETE, unique and check constraints", async () => {
    const rows = await executeRows<{
      table: string;
      kind: string;
      name: string;
      columns: string;
      target: string | null;
      on_delete: string;
    }>(
      getDb(),
      `select cl.relname as table, c.contype as kind, c.conname as name,
              array_to_string(array(
                select a.attname from unnest(c.conkey) with ordinality k(attnum, ord)
                  join pg_attribute a on a.attrelid = c.conrelid and a.attnum = k.attnum order by k.ord), ',') as columns,
              case when c.contype = 'f' then ft.relname || '(' || array_to_string(array(
                select a.attname from unnest(c.confkey) with ordinality k(attnum, ord)
                  join pg_attribute a on a.attrelid = c.confrelid and a.attnum = k.attnum order by k.ord), ',') || ')'
              end as target,
              c.confdeltype as on_delete
         from pg_constraint c
         join pg_class cl on cl.oid = c.conrelid
         join pg_namespace n on n.oid = cl.relnamespace
         left join pg_class ft on ft.oid = c.confrelid
        where n.nspname = current_schema() and c.contype in ('p', 'f', 'u', 'c')`,
    );
    for (const config of configs) {
      const mine = rows.filter((row) => row.table === config.name && row.name !== `${MIGRATIONS_TABLE}_pkey`);

      const primaryInDrizzle = [
        ...config.columns.filter((column) => column.primary).map((column) => column.name),
        ...config.primaryKeys.flatMap((key) => key.columns.map((column) => column.name)),
      ];
      const primaryInDb = mine.filter((row) => row.kind === "p").flatMap((row) => row.columns.split(","));
      expect(sorted(primaryInDb), `${config.name} primary key`).toEqual(sorted(primaryInDrizzle));

      const foreignInDrizzle = config.foreignKeys.map((fk) => {
        const ref = fk.reference();
        const target = getTableConfig(ref.foreignTable).name;
        const columns = ref.columns.map((column) => column.name).join(",");
        const foreign = ref.foreignColumns.map((column) => column.name).join(",");
        return `${columns} -> ${target}(${foreign}) on delete ${fk.onDelete ?? "no action"}`;
      });
      const foreignInDb = mine
        .filter((row) => row.kind === "f")
        .map(
          (row) => `${row.columns} -> ${row.target} on delete ${ON_DELETE[row.on_delete] ?? row.on_delete}`,
        );
      expect(sorted(foreignInDb), `${config.name} foreign keys`).toEqual(sorted(foreignInDrizzle));

      const uniqueInDrizzle = [
        ...config.columns
          .filter((column) => column.isUnique)
          .map((column) => `${column.uniqueName} (${column.name})`),
        ...config.uniqueConstraints.map(
          (unique) => `${unique.getName()} (${unique.columns.map((column) => column.name).join(",")})`,
        ),
      ];
      const uniqueInDb = mine.filter((row) => row.kind === "u").map((row) => `${row.name} (${row.columns})`);
      expect(sorted(uniqueInDb), `${config.name} unique constraints`).toEqual(sorted(uniqueInDrizzle));

      const checksInDb = mine.filter((row) => row.kind === "c").map((row) => row.name);
      expect(sorted(checksInDb), `${config.name} checks`).toEqual(
        sorted(config.checks.map((check) => check.name)),
      );
    }
  });

  it("has the same indexes, unique and partial alike", async () => {
    const rows = await executeRows<{ table: string; name: string; is_unique: boolean; is_partial: boolean }>(
      getDb(),
      `select t.relname as table, i.relname as name, x.indisunique as is_unique,
              (x.indpred is not null) as is_partial
         from pg_index x
         join pg_class i on i.oid = x.indexrelid
         join pg_class t on t.oid = x.indrelid
         join pg_namespace n on n.oid = t.relnamespace
        where n.nspname = current_schema()
          and not exists (select 1 from pg_constraint c where c.conindid = x.indexrelid)`,
    );
    for (const config of configs) {
      const inDb = rows
        .filter((row) => row.table === config.name)
        .map((row) => `${row.name}${row.is_unique ? " unique" : ""}${row.is_partial ? " partial" : ""}`);
      const inDrizzle = config.indexes.map(
        (index) =>
          `${index.config.name}${index.config.unique ? " unique" : ""}${index.config.where ? " partial" : ""}`,
      );
      expect(sorted(inDb), `${config.name} indexes`).toEqual(sorted(inDrizzle));
    }
  });
});
