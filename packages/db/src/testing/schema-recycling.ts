/**
 * @module Reuses a migrated test schema instead of migrating a new one for every test.
 *
 * Migrating costs 0.6–1.2 s a schema on a loaded machine, emptying one a few milliseconds, and
 * a run hands out hundreds (issue 32). A schema goes back to its engine's spares only when it
 * still has the shape the migrations gave it (a test that altered a table loses its schema to a
 * DROP instead), and is emptied then: every table but the migrations' own, with triggers off so
 * foreign keys do not order the deletes, and identities restarted. It is renamed to a new unique
 * name when handed out again, so a listener or pool left over from the test before, which names
 * the old schema, can never reach the next test's rows.
 */
import { MIGRATIONS_TABLE } from "../migrate.js";

/** Runs one SQL text (several statements allowed) with optional parameters, returning its rows. */
export type RunSql = (text: string, params?: unknown[]) => Promise<Record<string, unknown>[]>;

/** What a freshly migrated schema looks like, and how to empty it. */
export interface MigratedShape {
  /** Catalog counts of the schema; a schema whose counts differ is not reused. */
  fingerprint: string;
  tables: string[];
  /** `table.column` of every identity column, restarted on reset. */
  identities: Array<{ table: string; column: string }>;
}

/** Counts that change when a test adds, drops or disables anything, or touches the migrations' rows. */
const FINGERPRINT_SQL = `
select concat_ws(':',
  (select count(*) from pg_class c where c.relnamespace = n.oid),
  (select count(*) from pg_attribute a join pg_class c on c.oid = a.attrelid
     where c.relnamespace = n.oid and a.attnum > 0 and not a.attisdropped),
  (select count(*) from pg_attrdef d join pg_class c on c.oid = d.adrelid where c.relnamespace = n.oid),
  (select count(*) from pg_constraint k where k.connamespace = n.oid and k.convalidated),
  (select count(*) from pg_trigger t join pg_class c on c.oid = t.tgrelid
     where c.relnamespace = n.oid and t.tgenabled = 'O'),
  (select count(*) from pg_proc p where p.pronamespace = n.oid),
  (select count(*) from pg_type y where y.typnamespace = n.oid)
) as fingerprint
from pg_namespace n where n.nspname = $1`;

function quote(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

async function fingerprintOf(run: RunSql, schema: string): Promise<string> {
  const [row] = await run(FINGERPRINT_SQL, [schema]);
  const migrations = await run(
    `select count(*)::int as n, coalesce(string_agg(checksum, ',' order by id), '') as sums from ${quote(schema)}.${MIGRATIONS_TABLE}`,
  );
  return `${String(row?.fingerprint)}/${String(migrations[0]?.n)}/${String(migrations[0]?.sums)}`;
}

/** Reads the shape of a schema the migrations just made. */
export async function readMigratedShape(run: RunSql, schema: string): Promise<MigratedShape> {
  const tables = await run(
    "select tablename from pg_tables where schemaname = $1 and tablename <> $2 order by tablename",
    [schema, MIGRATIONS_TABLE],
  );
  const identities = await run(
    `select table_name, column_name from information_schema.columns
     where table_schema = $1 and is_identity = 'YES' order by table_name, column_name`,
    [schema],
  );
  return {
    fingerprint: await fingerprintOf(run, schema),
    tables: tables.map((row) => String(row.tablename)),
    identities: identities.map((row) => ({ table: String(row.table_name), column: String(row.column_name) })),
  };
}

/**
 * Empties `schema` for its next test and says true, or says false when it no longer has the
 * migrated shape (the caller drops it). Needs a superuser for the triggers; false without one.
 */
export async function emptyForReuse(run: RunSql, schema: string, shape: MigratedShape): Promise<boolean> {
  const [role] = await run("select current_setting('is_superuser') = 'on' as superuser");
  if (role?.superuser !== true || (await fingerprintOf(run, schema)) !== shape.fingerprint) {
    return false;
  }
  const qualified = (table: string) => `${quote(schema)}.${quote(table)}`;
  const statements = [
    "begin",
    "set local session_replication_role = replica",
    ...shape.tables.map((table) => `delete from ${qualified(table)}`),
    ...shape.identities.map(
      ({ table, column }) => `alter table ${qualified(table)} alter column ${quote(column)} restart`,
    ),
    "commit",
  ];
  try {
    await run(statements.join(";\n"));
    return true;
  } catch {
    await run("rollback").catch(() => {});
    return false;
  }
}
