import { appendFile, copyFile, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { connect, IN_MEMORY } from "./connect.js";
import { executeRows } from "./database.js";
import {
  loadMigrations,
  MIGRATIONS_DIR,
  MIGRATIONS_TABLE,
  MigrationError,
  migrate,
  STATEMENT_BREAKPOINT,
} from "./migrate.js";
import { runDbSuite } from "./testing/db-suite.js";
import { createTestEngine, postgresNote, testDatabaseUrl } from "./testing/test-engine.js";

let dir = "";

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "fleetback-migrations-"));
  for (const file of await readdir(MIGRATIONS_DIR)) {
    await copyFile(join(fileURLToPath(MIGRATIONS_DIR), file), join(dir, file));
  }
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("loadMigrations", () => {
  it("orders the shipped files and splits them at the breakpoint marker", async () => {
    const migrations = await loadMigrations();
    expect(migrations[0]).toMatchObject({ id: 1, name: "0001_initial" });
    expect(migrations.map((m) => m.id)).toEqual([...migrations.map((m) => m.id)].sort((a, b) => a - b));
    for (const migration of migrations) {
      expect(migration.checksum).toMatch(/^[0-9a-f]{64}$/);
      expect(migration.statements.length).toBeGreaterThan(0);
      expect(migration.statements.join("\n")).not.toContain(STATEMENT_BREAKPOINT);
    }
  });

  it("refuses a badly named file and a duplicate number", async () => {
    await writeFile(join(dir, "2_oops.sql"), "select 1");
    await expect(loadMigrations(dir)).rejects.toThrow(/2_oops\.sql is not named/);
    await rm(join(dir, "2_oops.sql"));
    await writeFile(join(dir, "0001_again.sql"), "select 1");
    await expect(loadMigrations(dir)).rejects.toThrow(/share the number 0001/);
  });

  it("gives a file the same checksum with CRLF or LF line endings", async () => {
    await writeFile(join(dir, "9000_a.sql"), "select 1;\nselect 2;\n");
    const lf = (await loadMigrations(dir)).at(-1);
    await writeFile(join(dir, "9000_a.sql"), "select 1;\r\nselect 2;\r\n");
    const crlf = (await loadMigrations(dir)).at(-1);
    expect(lf?.name).toBe("9000_a");
    expect(crlf?.checksum).toBe(lf?.checksum);
  });
});

runDbSuite(
  "migrate",
  (getDb) => {
    it("applies every migration to a fresh database and records each one", async () => {
      const migrations = await loadMigrations();
      const report = await migrate(getDb());

      expect(report).toEqual({ applied: migrations.map((m) => m.name), alreadyApplied: 0 });
      const rows = await executeRows<{ id: number; name: string; checksum: string }>(
        getDb(),
        `select id, name, checksum from ${MIGRATIONS_TABLE} order by id`,
      );
      expect(rows.map((r) => ({ id: Number(r.id), name: r.name, checksum: r.checksum }))).toEqual(
        migrations.map((m) => ({ id: m.id, name: m.name, checksum: m.checksum })),
      );
    });

    it("does nothing when run again", async () => {
      const first = await migrate(getDb());
      const second = await migrate(getDb());
      expect(second).toEqual({ applied: [], alreadyApplied: first.applied.length });
    });

    it("applies only a newly added migration", async () => {
      const first = await migrate(getDb(), { migrationsDir: dir });
      await writeFile(
        join(dir, "9001_add_note.sql"),
        `ALTER TABLE hosts ADD COLUMN note text;\n${STATEMENT_BREAKPOINT}\nCREATE INDEX hosts_note_idx ON hosts (note);\n`,
      );
      const second = await migrate(getDb(), { migrationsDir: dir });
      expect(second).toEqual({ applied: ["9001_add_note"], alreadyApplied: first.applied.length });
      await executeRows(getDb(), "select note from hosts");
    });

    it("fails clearly when an applied migration was edited", async () => {
      await migrate(getDb(), { migrationsDir: dir });
      await appendFile(join(dir, "0001_initial.sql"), "\n-- an innocent-looking edit\n");

      const error = await migrate(getDb(), { migrationsDir: dir }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MigrationError);
      expect(String(error)).toMatch(/0001_initial was changed after it was applied.*never edit/);
    });

    it("fails clearly when the database is ahead of this build", async () => {
      await writeFile(join(dir, "9001_future.sql"), "CREATE TABLE future (id integer);");
      await migrate(getDb(), { migrationsDir: dir });

      await expect(migrate(getDb())).rejects.toThrow(/9001_future applied, which this build does not ship/);
    });

    it("rolls the whole run back when one migration fails", async () => {
      await writeFile(
        join(dir, "9001_broken.sql"),
        `CREATE TABLE half_done (id integer);\n${STATEMENT_BREAKPOINT}\nSELECT no_such_function();\n`,
      );
      await expect(migrate(getDb(), { migrationsDir: dir })).rejects.toThrow();

      const [row] = await executeRows<{
        hosts: string | null;
        half: string | null;
        bookkeeping: string | null;
      }>(
        getDb(),
        `select to_regclass('hosts')::text as hosts, to_regclass('half_done')::text as half,
                to_regclass('${MIGRATIONS_TABLE}')::text as bookkeeping`,
      );
      expect(row).toEqual({ hosts: null, half: null, bookkeeping: null });
    });
  },
  { migrated: false },
);

describe.skipIf(!process.env.TEST_DATABASE_URL)(
  `migrate on PostgreSQL from two servers at once${postgresNote()}`,
  () => {
    it("applies each migration exactly once and both runners succeed", async () => {
      const migrations = await loadMigrations();
      const engine = await createTestEngine("postgres");
      try {
        for (let round = 0; round < 3; round++) {
          // Two pools on one fresh schema, as two replicas starting together would have.
          const first = await engine.createDatabase({ migrated: false });
          const second = await connect({
            databaseUrl: testDatabaseUrl(),
            dataDir: IN_MEMORY,
            schema: first.schema,
          });
          try {
            const reports = await Promise.all([migrate(first.db), migrate(second.db)]);

            const appliedNames = reports.flatMap((report) => report.applied);
            expect(appliedNames.sort()).toEqual(migrations.map((m) => m.name).sort());
            expect(reports.map((report) => report.applied.length + report.alreadyApplied)).toEqual([
              migrations.length,
              migrations.length,
            ]);
            const rows = await executeRows<{ id: number; times: string | number }>(
              first.db,
              `select id, count(*) as times from ${MIGRATIONS_TABLE} group by id order by id`,
            );
            expect(rows.map((row) => [Number(row.id), Number(row.times)])).toEqual(
              migrations.map((m) => [m.id, 1]),
            );
          } finally {
            await second.close();
            await first.close();
          }
        }
      } finally {
        await engine.close();
      }
    });
  },
);
