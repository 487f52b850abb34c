/**
 * Issue 40.2: the upkeep tick vacuums the embedded database's churned tables when the server was
 * idle, and puts it off when it was busy.
 */
import { executeRows } from "@fleetback/db";
import { sql } from "drizzle-orm";
import { afterEach, beforeEach, expect, it } from "vitest";
import { createTestDeps, type TestDeps } from "../testing/test-deps.js";
import { createDbUpkeep, DB_UPKEEP_IDLE_BELOW } from "./db-upkeep.js";

let deps: TestDeps;
beforeEach(async () => {
  deps = await createTestDeps();
});
afterEach(async () => {
  await deps.close();
});

it("vacuums a churned table when idle, and waits while the server is busy", async () => {
  await deps.db.execute(sql`insert into evidence_hosts (host_id, name, first_day, updated_at)
    select 'h' || i, 'host-' || i, '2026-11-01', now() from generate_series(1, 2000) i`);
  await deps.db.execute(sql`delete from evidence_hosts`);
  const tick = createDbUpkeep(deps);

  expect(await tick(DB_UPKEEP_IDLE_BELOW + 0.1)).toEqual({
    ran: false,
    utilization: DB_UPKEEP_IDLE_BELOW + 0.1,
  });
  const idle = await tick(0.05);
  expect(idle).toMatchObject({ ran: true, checkpointed: true });
  expect(idle.ran && idle.vacuumed).toContain("evidence_hosts");
  const [stats] = await executeRows<{ dead: string }>(
    deps.db,
    sql`select n_dead_tup::text as dead from pg_stat_user_tables
         where schemaname = current_schema() and relname = 'evidence_hosts'`,
  );
  expect(stats?.dead).toBe("0");
  expect(deps.logLines.some((line) => line.includes("embedded database vacuumed and analyzed"))).toBe(true);
});
