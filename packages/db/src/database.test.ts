import { eq, sql } from "drizzle-orm";
import { expect, it } from "vitest";
import { executeRows } from "./database.js";
import { hosts, jobs } from "./schema/index.js";
import { insertHost, insertJob } from "./test-support/fixtures.js";
import { runDbSuite } from "./testing/db-suite.js";

runDbSuite("Database", (getDb, { engine }) => {
  it("returns raw rows from executeRows on either engine", async () => {
    const db = getDb();
    await insertHost(db, { name: "raw" });
    const rows = await executeRows<{ name: string; n: number }>(db, sql`select name, 1 as n from hosts`);
    expect(rows).toEqual([{ name: "raw", n: 1 }]);
    expect(engine === "pglite" || engine === "postgres").toBe(true);
  });

  it("offers the relational query API over the schema", async () => {
    const db = getDb();
    const host = await insertHost(db);
    await insertJob(db, host.id, { kind: "init", status: "succeeded" });
    const found = await db.query.hosts.findFirst({ where: eq(hosts.id, host.id) });
    expect(found?.name).toBe("web-1");
    const latestInit = await db.query.jobs.findFirst({
      where: (job, { and }) => and(eq(job.hostId, host.id), eq(job.kind, "init")),
      orderBy: (job, { desc }) => [desc(job.createdAt)],
    });
    expect(latestInit?.status).toBe("succeeded");
  });

  it("commits a transaction as a whole or not at all", async () => {
    const db = getDb();
    const host = await insertHost(db);
    await expect(
      db.transaction(async (tx) => {
        await tx.update(hosts).set({ status: "online" }).where(eq(hosts.id, host.id));
        await insertJob(tx, host.id);
        tx.rollback();
      }),
    ).rejects.toThrow();
    const [after] = await db.select().from(hosts);
    expect(after?.status).toBe("offline");
    expect(await db.select().from(jobs)).toEqual([]);
  });
});
