import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { executeRows } from "./database.js";
import { hostCredentials, jobLogs, repoStats, snapshots, sourceGroups } from "./schema/index.js";
import { insertHost, insertJob, insertSourceGroup } from "./test-support/fixtures.js";
import { runDbSuite } from "./testing/db-suite.js";

runDbSuite("column types", (getDb) => {
  it("round-trips bytea as a plain Uint8Array", async () => {
    const db = getDb();
    const host = await insertHost(db);
    const sealed = new Uint8Array([0, 1, 2, 254, 255]);
    await db.insert(hostCredentials).values({ hostId: host.id, repoSealed: sealed });

    const [row] = await db.select().from(hostCredentials);
    expect(row?.repoSealed).toBeInstanceOf(Uint8Array);
    expect(row?.repoSealed?.constructor).toBe(Uint8Array);
    expect(Array.from(row?.repoSealed ?? [])).toEqual([0, 1, 2, 254, 255]);
    expect(row?.adminSealed).toBeNull();
  });

  it("stores jsonb as JSON values, not as JSON-encoded strings", async () => {
    const db = getDb();
    const host = await insertHost(db);
    const group = await insertSourceGroup(db, host.id, {
      includes: ["/etc", "/home"],
      retentionPolicy: { daily: 7, within: "30d" },
    });

    const [row] = await db.select().from(sourceGroups).where(eq(sourceGroups.id, group.id));
    expect(row?.includes).toEqual(["/etc", "/home"]);
    expect(row?.excludes).toEqual([]);
    expect(row?.retentionPolicy).toEqual({ daily: 7, within: "30d" });
    const [kind] = await executeRows<{ kind: string }>(
      db,
      `select jsonb_typeof(retention_policy) as kind from source_groups`,
    );
    expect(kind?.kind).toBe("object");
  });

  it("reads bigint columns as numbers and timestamptz as Dates", async () => {
    const db = getDb();
    const host = await insertHost(db);
    const time = new Date("2025-01-02T03:04:05.678Z");
    const big = 2 ** 40 + 3;
    await db.insert(snapshots).values({
      hostId: host.id,
      id: "f".repeat(64),
      shortId: "ffffffff",
      time,
      hostname: "web-1",
      sizeBytes: big,
      fileCount: 0,
    });
    await db.insert(repoStats).values({ hostId: host.id, totalSizeBytes: big, compressionRatio: 1.5 });

    const [snapshot] = await db.select().from(snapshots);
    expect(snapshot?.sizeBytes).toBe(big);
    expect(snapshot?.fileCount).toBe(0);
    // Unknown (restic before 0.17 reports neither) is null, not a default 0.
    await db
      .insert(snapshots)
      .values({ hostId: host.id, id: "e".repeat(64), shortId: "eeeeeeee", time, hostname: "web-1" });
    const [unknown] = await db
      .select()
      .from(snapshots)
      .where(eq(snapshots.id, "e".repeat(64)));
    expect(unknown).toMatchObject({ sizeBytes: null, fileCount: null });
    expect(snapshot?.time).toEqual(time);
    const [stats] = await db.select().from(repoStats);
    expect(stats).toMatchObject({ totalSizeBytes: big, compressionRatio: 1.5, lastCheckStatus: null });
  });

  it("numbers job log lines by identity", async () => {
    const db = getDb();
    const host = await insertHost(db);
    const job = await insertJob(db, host.id);
    const line = { jobId: job.id, stream: "stdout" as const, ts: new Date() };
    const rows = await db
      .insert(jobLogs)
      .values([
        { ...line, seq: 1, line: "one" },
        { ...line, seq: 2, line: "two" },
      ])
      .returning();
    const [first, second] = rows;
    expect(typeof first?.id).toBe("number");
    expect((second?.id ?? 0) > (first?.id ?? 0)).toBe(true);
  });

  it("fills host defaults for a freshly enrolled host", async () => {
    const host = await insertHost(getDb());
    expect(host).toMatchObject({
      status: "offline",
      toolVersion: "",
      snapshotCount: 0,
      scheduleVersion: 0,
      scheduleAckedVersion: 0,
      protocolVersion: null,
      bandwidthUpKbps: null,
    });
    expect(host.createdAt).toBeInstanceOf(Date);
  });
});
