/**
 * The embedded database's upkeep (issue 40.2): a table whose rows were replaced is vacuumed and
 * analyzed once its dead rows pass autovacuum's threshold, the worst first and no more than asked
 * per pass, and a pass over a clean schema does nothing.
 */
import { sql } from "drizzle-orm";
import { expect, it } from "vitest";
import { type Database, executeRows } from "./database.js";
import { runDbSuite } from "./testing/db-suite.js";
import { upkeep } from "./upkeep.js";

async function churn(db: Database, table: "evidence_hosts" | "evidence_days", rows: number) {
  if (table === "evidence_hosts") {
    await db.execute(sql`insert into evidence_hosts (host_id, name, first_day, updated_at)
      select 'h' || i, 'host-' || i, '2026-11-01', now() from generate_series(1, ${rows}) i`);
    await db.execute(sql`delete from evidence_hosts`);
  } else {
    await db.execute(sql`insert into evidence_days (host_id, day, kind, runs, passed, last_at, last_passed)
      select 'h' || i, '2026-11-01', 'check', 1, 1, now(), true from generate_series(1, ${rows}) i`);
    await db.execute(sql`delete from evidence_days`);
  }
}

/** Waits for the statistics to show the dead rows: PostgreSQL's backends flush them when idle. */
async function deadRowsSeen(db: Database, table: string, atLeast: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const [row] = await executeRows<{ dead: string }>(
      db,
      sql`select n_dead_tup::text as dead from pg_stat_user_tables
           where schemaname = current_schema() and relname = ${table}`,
    );
    if (Number(row?.dead ?? 0) >= atLeast) {
      return;
    }
    if (Date.now() > deadline) {
      throw new Error(`${table}: ${row?.dead ?? 0} dead rows seen, waited for ${atLeast}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

runDbSuite("database upkeep", (getDb, { engine }) => {
  it("vacuums the tables with the most dead rows first, at most as many as asked, then checkpoints", async () => {
    const db = getDb();
    // More dead rows than a schema an earlier test emptied and gave back leaves in any table.
    await churn(db, "evidence_hosts", 20_000);
    await churn(db, "evidence_days", 5_000);
    await deadRowsSeen(db, "evidence_hosts", 20_000);
    await deadRowsSeen(db, "evidence_days", 5_000);
    const checkpoint = engine === "pglite";

    const first = await upkeep(db, { maxVacuums: 1, checkpoint });
    expect(first.vacuumed).toEqual(["evidence_hosts"]);
    expect(first.checkpointed).toBe(checkpoint);
    if (engine === "postgres") {
      // A shared server: another session's open snapshot can keep rows VACUUM may not remove yet,
      // and they count as dead again. The embedded database this is for has one session.
      return;
    }
    const second = await upkeep(db, { maxVacuums: 1, checkpoint });
    expect(second.vacuumed).toEqual(["evidence_days"]);
    const [vacuumed] = await executeRows<{ dead: string; vacuumed: boolean }>(
      db,
      sql`select n_dead_tup::text as dead, last_vacuum is not null as vacuumed from pg_stat_user_tables
           where schemaname = current_schema() and relname = 'evidence_hosts'`,
    );
    expect(vacuumed).toEqual({ dead: "0", vacuumed: true });

    const clean = await upkeep(db, { checkpoint });
    expect(clean).toEqual({ vacuumed: [], analyzed: [], checkpointed: false });
  });
});
