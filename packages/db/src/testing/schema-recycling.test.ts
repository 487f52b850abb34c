import { describe, expect, it } from "vitest";
import { executeRows } from "../database.js";
import { insertHost, insertJob } from "../test-support/fixtures.js";
import { createTestEngine, type TestEngine, testEngines } from "./test-engine.js";

async function count(db: Parameters<typeof executeRows>[0], table: string): Promise<number> {
  const [row] = await executeRows<{ n: number }>(db, `select count(*)::int as n from ${table}`);
  return Number(row?.n);
}

async function schemaExists(engine: TestEngine, name: string): Promise<boolean> {
  const probe = await engine.createDatabase({ migrated: false });
  try {
    const rows = await executeRows(probe.db, `select 1 from pg_namespace where nspname = '${name}'`);
    return rows.length > 0;
  } finally {
    await probe.close();
  }
}

// Each test starts engines of its own, PGlite's initdb included when there is no template yet:
// seconds on a quiet machine, half a minute on a loaded one.
const ENGINE_TESTS_MS = 180_000;

for (const kind of testEngines()) {
  describe(`test schemas handed out again (${kind})`, { timeout: ENGINE_TESTS_MS }, () => {
    it("gives the next test an empty schema under a new name, identities restarted", async () => {
      const engine = await createTestEngine(kind);
      try {
        const first = await engine.createDatabase();
        const host = await insertHost(first.db);
        await insertJob(first.db, host.id);
        await executeRows(first.db, "select nextval(pg_get_serial_sequence('job_logs', 'id'))");
        await executeRows(first.db, "select nextval(pg_get_serial_sequence('job_logs', 'id'))");
        await first.close();

        const second = await engine.createDatabase();
        try {
          expect(second.schema).not.toBe(first.schema);
          expect(await count(second.db, "hosts")).toBe(0);
          expect(await count(second.db, "jobs")).toBe(0);
          const [next] = await executeRows<{ id: string | number }>(
            second.db,
            "select nextval(pg_get_serial_sequence('job_logs', 'id')) as id",
          );
          expect(Number(next?.id)).toBe(1);
          // The rows of the migrations stay: the schema needs no migrating again.
          expect(await count(second.db, "fleetback_migrations")).toBeGreaterThan(10);
        } finally {
          await second.close();
        }
        // The first test's name is gone, so anything still holding it reaches nothing.
        expect(await schemaExists(engine, first.schema)).toBe(false);
      } finally {
        await engine.close();
      }
    });

    it("does not hand out a schema a test altered; the next test gets a newly migrated one", async () => {
      const engine = await createTestEngine(kind);
      try {
        const first = await engine.createDatabase();
        await executeRows(first.db, "alter table hosts add column planted text");
        await first.close();
        expect(await schemaExists(engine, first.schema)).toBe(false);

        const second = await engine.createDatabase();
        try {
          const columns = await executeRows(
            second.db,
            `select column_name from information_schema.columns
             where table_schema = current_schema() and table_name = 'hosts' and column_name = 'planted'`,
          );
          expect(columns).toEqual([]);
        } finally {
          await second.close();
        }
      } finally {
        await engine.close();
      }
    });

    it("opens a second database while the first is open, and drops its spares on close", async () => {
      const engine = await createTestEngine(kind);
      const first = await engine.createDatabase();
      const second = await engine.createDatabase();
      await insertHost(first.db);
      expect(await count(second.db, "hosts")).toBe(0);
      expect(await count(first.db, "hosts")).toBe(1);
      await first.close();
      await second.close();
      await engine.close();

      const other = await createTestEngine(kind);
      try {
        expect(await schemaExists(other, first.schema)).toBe(false);
        expect(await schemaExists(other, second.schema)).toBe(false);
      } finally {
        await other.close();
      }
    });
  });
}
