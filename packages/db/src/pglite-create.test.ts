import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { connect, pgliteOptions } from "./connect.js";
import { executeRows } from "./database.js";
import { loadMigrations, MIGRATIONS_TABLE, migrate } from "./migrate.js";
import { buildTemplate, createPgliteDataDir, heldBy, isPgliteDataDir } from "./pglite-create.js";
import { withConnection, withTempDir } from "./test-support/scratch.js";

/** `<dataDir>/pglite` made empty, where connect() would look for the embedded database. */
async function emptyLocation(dataDir: string): Promise<string> {
  const location = join(dataDir, "pglite");
  await mkdir(location, { recursive: true });
  return location;
}

/** What connect() passes: PGlite's defaults plus the smaller buffers. */
async function startParams(): Promise<string[]> {
  const { PGlite } = await import("@electric-sql/pglite");
  return pgliteOptions(PGlite.defaultStartParams).startParams;
}

describe("creating a PGlite data dir", () => {
  it("uses a template only when its migrations begin the list asked for, and then applies the rest", async () => {
    const migrations = await loadMigrations();
    const held = (list: typeof migrations) => list.map(({ id, checksum }) => ({ id, checksum }));
    const older = { file: "t.tar.gz", holds: held(migrations.slice(0, -2)) };
    expect(heldBy(older, migrations)).toBe(migrations.length - 2);
    expect(heldBy({ file: "t.tar.gz", holds: held(migrations) }, migrations)).toBe(migrations.length);
    // A newer build's template, an edited migration, another project's list: not this database.
    expect(heldBy({ file: "t.tar.gz", holds: held(migrations) }, migrations.slice(0, -1))).toBeUndefined();
    const edited = held(migrations).map((m, i) => (i === 3 ? { ...m, checksum: "0".repeat(64) } : m));
    expect(heldBy({ file: "t.tar.gz", holds: edited }, migrations)).toBeUndefined();
    expect(heldBy({ file: "t.tar.gz", holds: held(migrations) }, [])).toBeUndefined();
    expect(heldBy({ file: "t.tar.gz", holds: [] }, migrations)).toBe(0);
  });

  it("fails with what the child said when the dir cannot be made", async () => {
    await withTempDir("fleetback-create-", async (dir) => {
      const file = join(dir, "a-file");
      await writeFile(file, "not a directory");
      await expect(createPgliteDataDir(join(file, "pglite"), await startParams())).rejects.toThrow(
        /^creating it failed .*: .*(ENOTDIR|EEXIST|not a directory)/i,
      );
    });
  }, 300_000);

  // One creation for both claims: an initdb costs ~30 s of a loaded CI machine.
  it("makes the dir from the build's template in a child process and applies the migrations it is given there, which migrate() then finds applied", async () => {
    await withTempDir("fleetback-create-", async (dir) => {
      const migrations = await loadMigrations();
      const location = await emptyLocation(dir);
      expect(isPgliteDataDir(location)).toBe(false);
      // The build writes it (scripts/pglite-template.mjs); tests run after the build.
      const template = buildTemplate();
      expect(template?.holds.length).toBe(migrations.length);
      const createdAfter = new Date(Date.now() - 1_000);
      const peakBefore = process.resourceUsage().maxRSS;
      expect(await createPgliteDataDir(location, await startParams(), migrations)).toEqual({
        from: "template",
      });
      expect(isPgliteDataDir(location)).toBe(true);
      // initdb in this process would raise its peak by ~600 MiB (WASM memory grown to ~700 MiB),
      // and migrating here would grow it by tens of MiB more.
      expect(process.resourceUsage().maxRSS - peakBefore).toBeLessThan(100 * 1024);
      await withConnection({ dataDir: dir }, async (connection) => {
        const recorded = await executeRows<{ name: string; checksum: string; applied_at: Date | string }>(
          connection.db,
          sql.raw(`SELECT name, checksum, applied_at FROM ${MIGRATIONS_TABLE} ORDER BY id`),
        );
        expect(recorded.map(({ name, checksum }) => ({ name, checksum }))).toEqual(
          migrations.map(({ name, checksum }) => ({ name, checksum })),
        );
        // Applied to this install when it was made, not when the build dumped the template.
        for (const row of recorded) {
          expect(new Date(row.applied_at).getTime()).toBeGreaterThanOrEqual(createdAfter.getTime());
        }
        const tables = await executeRows<{ n: number }>(
          connection.db,
          sql`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_name IN ('hosts', 'jobs', 'job_logs')`,
        );
        expect(tables[0]?.n).toBe(3);
        expect(await migrate(connection.db)).toEqual({ applied: [], alreadyApplied: migrations.length });
      });
    });
  }, 300_000);

  it("runs initdb instead when the template does not load, and the dir works the same", async () => {
    await withTempDir("fleetback-create-", async (dir) => {
      const damaged = join(dir, "template.tar.gz");
      await writeFile(damaged, "not a tar archive");
      const location = await emptyLocation(dir);
      const migrations = await loadMigrations();
      const created = await createPgliteDataDir(location, await startParams(), migrations, {
        file: damaged,
        holds: [],
      });
      expect(created.from).toBe("initdb");
      expect(created.templateRefused).toBeTruthy();
      await withConnection({ dataDir: dir }, async (connection) => {
        expect(await migrate(connection.db)).toEqual({ applied: [], alreadyApplied: migrations.length });
      });
    });
  }, 300_000);

  it("connect() hands a new data dir's migrations to the child, and ignores them for an existing dir", async () => {
    await withTempDir("fleetback-create-", async (dir) => {
      const migrations = await loadMigrations();
      const first = await connect({ dataDir: dir, migrations });
      expect(first.created).toEqual({ from: "template" });
      expect(await migrate(first.db)).toEqual({ applied: [], alreadyApplied: migrations.length });
      await first.close();
      const bogus = [
        { id: 99, name: "0099_never", checksum: "x", statements: ["CREATE TABLE never (id int)"] },
      ];
      await withConnection({ dataDir: dir, migrations: bogus }, async (again) => {
        expect(again.created).toBeUndefined();
        const rows = await executeRows<{ n: number }>(
          again.db,
          sql.raw(`SELECT count(*)::int AS n FROM ${MIGRATIONS_TABLE}`),
        );
        expect(rows[0]?.n).toBe(migrations.length);
      });
    });
  }, 300_000);

  it("fails the creation when a migration fails, leaving no migration recorded", async () => {
    await withTempDir("fleetback-create-", async (dir) => {
      const location = await emptyLocation(dir);
      const migrations = [
        { id: 1, name: "0001_ok", checksum: "a", statements: ["CREATE TABLE t_ok (id int)"] },
        { id: 2, name: "0002_bad", checksum: "b", statements: ["CREATE TABLE t_bad (id nosuchtype)"] },
      ];
      await expect(createPgliteDataDir(location, await startParams(), migrations)).rejects.toThrow(
        /^creating it failed .*nosuchtype/,
      );
      // The dir exists; a start migrates it in process, where the same error is reported.
      expect(isPgliteDataDir(location)).toBe(true);
      await withConnection({ dataDir: dir }, async (connection) => {
        const tables = await executeRows<{ n: number }>(
          connection.db,
          sql`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_name IN ('t_ok', ${MIGRATIONS_TABLE})`,
        );
        expect(tables[0]?.n).toBe(0);
      });
    });
  }, 300_000);
});
