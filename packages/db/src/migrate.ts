/**
 * @module Applies the numbered SQL migrations of `packages/db/migrations/` at start-up.
 *
 * One run is one transaction: it takes an advisory lock first, so a second server starting at
 * the same moment waits, then finds everything applied and does nothing. Migration files must
 * therefore be transactional (no CREATE INDEX CONCURRENTLY). Statements inside a file are
 * separated by `--> statement-breakpoint`, because PGlite's extended-protocol queries take one
 * statement at a time.
 */
import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { sql } from "drizzle-orm";
import { acquireAdvisoryXactLock } from "./advisory-lock.js";
import { type Database, executeRows } from "./database.js";

/** Shipped beside `dist/` in the package; resolves from `src/` in tests alike. */
export const MIGRATIONS_DIR = new URL("../migrations/", import.meta.url);

export const MIGRATIONS_TABLE = "fleetback_migrations";
export const STATEMENT_BREAKPOINT = "--> statement-breakpoint";
/** The bookkeeping table; also created by a new PGlite data dir's child (pglite-create.ts). */
export const MIGRATIONS_TABLE_DDL = `CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (
  id integer PRIMARY KEY,
  name text NOT NULL,
  checksum text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
)`;
const FILE_NAME = /^(\d{4})_[a-z0-9_]+\.sql$/;
const LOCK_NAME = "migrations";

export interface Migration {
  id: number;
  /** File name without `.sql`, e.g. `0001_initial`. */
  name: string;
  /** SHA-256 hex of the file with line endings normalised to LF. */
  checksum: string;
  statements: string[];
}

export interface MigrationReport {
  /** Names applied by this run, in order. */
  applied: string[];
  /** How many were applied before this run. */
  alreadyApplied: number;
}

export interface MigrateOptions {
  /** Directory of the `NNNN_name.sql` files; defaults to the package's own. */
  migrationsDir?: URL | string;
}

/** The migrations on disk and in the database disagree; start-up must stop. */
export class MigrationError extends Error {
  override readonly name = "MigrationError";
}

/** Reads and orders the migration files of a directory. */
export async function loadMigrations(dir: URL | string = MIGRATIONS_DIR): Promise<Migration[]> {
  const path = typeof dir === "string" ? dir : fileURLToPath(dir);
  const files = (await readdir(path)).filter((file) => file.endsWith(".sql")).sort();
  const migrations: Migration[] = [];
  for (const file of files) {
    const match = FILE_NAME.exec(file);
    if (!match) {
      throw new MigrationError(`migration file ${file} is not named NNNN_lower_snake.sql`);
    }
    const id = Number(match[1]);
    if (migrations.some((m) => m.id === id)) {
      throw new MigrationError(`two migration files share the number ${match[1]}`);
    }
    const text = (await readFile(join(path, file), "utf8")).replace(/\r\n/g, "\n");
    migrations.push({
      id,
      name: file.slice(0, -".sql".length),
      checksum: createHash("sha256").update(text).digest("hex"),
      statements: text
        .split(STATEMENT_BREAKPOINT)
        .map((statement) => statement.trim())
        .filter((statement) => statement !== ""),
    });
  }
  return migrations;
}

/** Applies every pending migration in one locked transaction. */
export async function migrate(db: Database, options: MigrateOptions = {}): Promise<MigrationReport> {
  const migrations = await loadMigrations(options.migrationsDir);
  return db.transaction(async (tx) => {
    // Lock before touching anything, even the bookkeeping table: a concurrent
    // CREATE TABLE IF NOT EXISTS is itself not race-free.
    await acquireAdvisoryXactLock(tx, LOCK_NAME);
    await tx.execute(sql.raw(MIGRATIONS_TABLE_DDL));
    const applied = await executeRows<{ id: number; name: string; checksum: string }>(
      tx,
      sql.raw(`SELECT id, name, checksum FROM ${MIGRATIONS_TABLE} ORDER BY id`),
    );
    verifyApplied(applied, migrations);
    const done = new Set(applied.map((row) => Number(row.id)));
    const report: MigrationReport = { applied: [], alreadyApplied: applied.length };
    for (const migration of migrations) {
      if (done.has(migration.id)) {
        continue;
      }
      for (const statement of migration.statements) {
        await tx.execute(sql.raw(statement));
      }
      await tx.execute(
        sql`INSERT INTO ${sql.identifier(MIGRATIONS_TABLE)} (id, name, checksum)
            VALUES (${migration.id}, ${migration.name}, ${migration.checksum})`,
      );
      report.applied.push(migration.name);
    }
    return report;
  });
}

function verifyApplied(
  applied: readonly { id: number; name: string; checksum: string }[],
  migrations: readonly Migration[],
): void {
  for (const row of applied) {
    const file = migrations.find((m) => m.id === Number(row.id));
    if (!file) {
      throw new MigrationError(
        `the database has migration ${row.name} applied, which this build does not ship; ` +
          "run a build at least as new as the one that applied it",
      );
    }
    if (file.checksum !== row.checksum) {
      throw new MigrationError(
        `migration ${file.name} was changed after it was applied ` +
          `(recorded checksum ${row.checksum}, file now ${file.checksum}); ` +
          "never edit an applied migration: restore it and add a new numbered one",
      );
    }
  }
}
