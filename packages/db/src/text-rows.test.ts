import { asc, eq } from "drizzle-orm";
import { expect, it, vi } from "vitest";
import { jobLogs } from "./schema/index.js";
import { insertHost, insertJob } from "./test-support/fixtures.js";
import { runDbSuite } from "./testing/db-suite.js";
import { insertTextRows, type TextColumn } from "./text-rows.js";

const COLUMNS: TextColumn[] = [
  { name: "job_id", type: "text" },
  { name: "seq", type: "integer" },
  { name: "stream", type: "text" },
  { name: "line", type: "text" },
  { name: "ts", type: "timestamptz" },
];

runDbSuite("insertTextRows", (getDb, { engine }) => {
  it("stores every row in one statement, each value cast to its column's type and kept exactly", async () => {
    const db = getDb();
    const host = await insertHost(db);
    const job = await insertJob(db, host.id);
    const odd = ['tab\there\nnewline\\backslash \\N {"a",b}', "", "NULL", "naïve ✓ 日本"];
    const rows = odd.map((line, index) => [
      job.id,
      String(index + 1),
      "stdout",
      line,
      "2026-01-01T00:00:00.123Z",
    ]);
    const execute = vi.spyOn(db, "execute");
    await insertTextRows(db, "job_logs", COLUMNS, rows);
    // PGlite takes a COPY through its client, PostgreSQL one INSERT: never a statement per row.
    expect(execute).toHaveBeenCalledTimes(engine === "postgres" ? 1 : 0);
    const stored = await db.select().from(jobLogs).where(eq(jobLogs.jobId, job.id)).orderBy(asc(jobLogs.seq));
    expect(stored.map((row) => [row.seq, row.line, row.ts.toISOString()])).toEqual(
      odd.map((line, index) => [index + 1, line, "2026-01-01T00:00:00.123Z"]),
    );
  });

  it("fails as a whole when one row is refused, inside the caller's transaction", async () => {
    const db = getDb();
    const host = await insertHost(db);
    const job = await insertJob(db, host.id);
    const failing = db.transaction(async (tx) => {
      await insertTextRows(tx, "job_logs", COLUMNS, [
        [job.id, "1", "stdout", "kept?", "2026-01-01T00:00:00Z"],
        ["no-such-job", "1", "stdout", "orphan", "2026-01-01T00:00:00Z"],
      ]);
    });
    await expect(failing).rejects.toThrow();
    expect(await db.select().from(jobLogs).where(eq(jobLogs.jobId, job.id))).toEqual([]);
  });
});
