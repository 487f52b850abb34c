import { asc, eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { copyTextField, pgliteCopy } from "./pglite-copy.js";
import { snapshots } from "./schema/index.js";
import { insertHost } from "./test-support/fixtures.js";
import { runDbSuite } from "./testing/db-suite.js";

const COLUMNS = [
  "host_id",
  "id",
  "short_id",
  "time",
  "hostname",
  "paths",
  "tags",
  "size_bytes",
  "file_count",
];

function row(hostId: string, id: string, hostname: string): string[] {
  return [hostId, id, id.slice(0, 8), "2026-01-01T00:00:00.123Z", hostname, '["/a\\\\b"]', "[]", "1", "2"];
}

it("escapes what would end a COPY field or row, or start an escape", () => {
  expect(copyTextField("a\tb\nc\rd\\e\\N")).toBe("a\\tb\\nc\\rd\\\\e\\\\N");
  expect(copyTextField("plain")).toBe("plain");
});

runDbSuite("pgliteCopy", (getDb, { engine }) => {
  it("copies rows inside the caller's transaction on PGlite; PostgreSQL gets no copier", async () => {
    const db = getDb();
    const host = await insertHost(db);
    const odd = "tab\there\nnewline\\backslash \\N";
    await db.transaction(async (tx) => {
      const copy = pgliteCopy(tx);
      if (engine === "postgres") {
        expect(copy).toBeUndefined();
        return;
      }
      expect(copy).toBeDefined();
      await copy?.("snapshots", COLUMNS, [row(host.id, "aa11", odd), row(host.id, "bb22", "plain")]);
      // Inside the transaction: the rows are there for the transaction's next statement.
      expect(await tx.select().from(snapshots).where(eq(snapshots.hostId, host.id))).toHaveLength(2);
    });
    if (engine === "postgres") {
      return;
    }
    const stored = await db.select().from(snapshots).orderBy(asc(snapshots.id));
    expect(stored.map((s) => [s.id, s.hostname, s.paths, s.time.toISOString(), s.sizeBytes])).toEqual([
      ["aa11", odd, ["/a\\b"], "2026-01-01T00:00:00.123Z", 1],
      ["bb22", "plain", ["/a\\b"], "2026-01-01T00:00:00.123Z", 1],
    ]);
  });

  // PostgreSQL gets no copier (above), so only PGlite has a COPY to roll back.
  if (engine === "pglite") {
    it("rolls back with the transaction it ran in", async () => {
      const db = getDb();
      const host = await insertHost(db);
      const failing = db.transaction(async (tx) => {
        await pgliteCopy(tx)?.("snapshots", COLUMNS, [row(host.id, "aa11", "web")]);
        throw new Error("later step failed");
      });
      await expect(failing).rejects.toThrow("later step failed");
      expect(await db.select().from(snapshots)).toEqual([]);
    });
  }
});
