import { randomBytes } from "node:crypto";
import { executeRows, hosts, snapshots, snapshotTags } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import { eq, getTableName, sql } from "drizzle-orm";
import { expect, it } from "vitest";
import { numberedSnapshot, seedHost } from "../testing/seed.js";
import { insertSnapshots } from "./snapshot-rows.js";
import { listSnapshots, replaceSnapshots, snapshotJson } from "./snapshot-store.js";

runDbSuite("snapshot rows", (getDb, { engine, current }) => {
  it("stores every field as sent, whatever characters it holds, and times to the millisecond", async () => {
    const db = getDb();
    const { host } = await seedHost({ db });
    // What would end a COPY field or row, start an escape, or break an array literal.
    const odd = 'tab\there, newline\nCR\r back\\slash \\N "quoted" {braced} comma, ünï 🦀';
    const sent = [
      numberedSnapshot(2, {
        hostname: odd,
        paths: [odd, "C:\\Users\\x", "/srv/a b"],
        tags: [odd, "{}", ""],
        time: "2026-01-01T00:02:00.123456789Z",
        size_bytes: Number.MAX_SAFE_INTEGER,
        file_count: 7,
      }),
      numberedSnapshot(1, { hostname: "", paths: [], tags: ["NULL"] }),
    ];
    // restic before 0.17 reports no size or count (the agent sends 0 and 0): unknown, stored as null.
    const unknown = numberedSnapshot(3, { size_bytes: 0, file_count: 0 });
    await replaceSnapshots(db, host.id, {
      snapshots: [unknown, ...sent],
      refreshed_at: "2026-01-02T00:00:00Z",
    });
    const stored = (await listSnapshots(db, host.id, { limit: 10 })).map(snapshotJson);
    expect(stored).toEqual([
      { ...unknown, size_bytes: null, file_count: null, time: new Date(unknown.time), own: true },
      // Neither hostname is one of the host's: other machines' snapshots, stored as sent.
      { ...sent[0], time: new Date("2026-01-01T00:02:00.123Z"), own: false },
      { ...sent[1], time: new Date(sent[1]?.time ?? ""), own: false },
    ]);
  });

  it("stores each time as Date reads it, whether or not it was sent to the millisecond", async () => {
    const db = getDb();
    const { host } = await seedHost({ db });
    const times = [
      "2026-02-28T23:59:59.999Z",
      "2024-02-29T12:00:00.000Z",
      // Date rolls a day past the month's end over into the next month; so does the store.
      "2026-02-30T00:00:00.000Z",
      "2026-04-31T08:00:00.250Z",
      "2026-03-01T00:00:00Z",
      "2026-03-02T00:00:00.5Z",
      "2026-03-03T00:00:00.123456Z",
    ];
    const sent = times.map((time, index) => numberedSnapshot(index + 1, { time }));
    await replaceSnapshots(db, host.id, { snapshots: sent, refreshed_at: "2026-05-01T00:00:00Z" });
    const stored = await listSnapshots(db, host.id, { limit: 10 });
    expect(Object.fromEntries(stored.map((row) => [row.id, row.time.toISOString()]))).toEqual(
      Object.fromEntries(sent.map((snapshot) => [snapshot.id, new Date(snapshot.time).toISOString()])),
    );
  });

  it("stores a leap second as the second before it instead of refusing the report", async () => {
    const db = getDb();
    const { host } = await seedHost({ db });
    const sent = [
      numberedSnapshot(1, { time: "2016-12-31T23:59:60Z" }),
      numberedSnapshot(2, { time: "2016-12-31T23:59:60.5Z" }),
      numberedSnapshot(3, { time: "2026-05-01T00:00:00Z" }),
    ];
    await replaceSnapshots(db, host.id, { snapshots: sent, refreshed_at: "2026-05-01T00:00:00Z" });
    const stored = await listSnapshots(db, host.id, { limit: 10 });
    expect(Object.fromEntries(stored.map((row) => [row.id, row.time.toISOString()]))).toEqual({
      [sent[0]?.id ?? ""]: "2016-12-31T23:59:59.000Z",
      [sent[1]?.id ?? ""]: "2016-12-31T23:59:59.500Z",
      [sent[2]?.id ?? ""]: "2026-05-01T00:00:00.000Z",
    });
  });

  it("derives the per-tag projection as aggregating the stored rows would", async () => {
    const db = getDb();
    const { host } = await seedHost({ db });
    const aggregated = () =>
      executeRows<{ tag: string; latest_at: string; snapshot_count: number }>(
        db,
        sql`select t.tag, to_char(max(s.time) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as latest_at,
                   count(*)::int as snapshot_count
            from ${snapshots} s cross join lateral jsonb_array_elements_text(s.tags) as t(tag)
            where s.host_id = ${host.id} group by t.tag order by t.tag`,
      );
    const projected = async () =>
      (
        await db.select().from(snapshotTags).where(eq(snapshotTags.hostId, host.id)).orderBy(snapshotTags.tag)
      ).map((row) => ({
        tag: row.tag,
        latest_at: row.latestAt.toISOString(),
        snapshot_count: row.snapshotCount,
      }));
    const first = [
      numberedSnapshot(5, { tags: ["daily", "etc"] }),
      numberedSnapshot(4, { tags: ["etc", "etc"] }),
      numberedSnapshot(3, { tags: [] }),
      numberedSnapshot(9, { tags: ["daily"], time: "2026-01-01T00:09:00.999999Z" }),
      numberedSnapshot(1, { tags: ["weekly"] }),
    ];
    await replaceSnapshots(db, host.id, { snapshots: first, refreshed_at: "2026-01-02T00:00:00Z" });
    expect(await projected()).toEqual(await aggregated());
    expect((await projected()).map((row) => row.tag)).toEqual(["daily", "etc", "weekly"]);
    // Kept, gone and new rows at once: the newest "daily" goes, "weekly" goes entirely.
    const second = [numberedSnapshot(6, { tags: ["etc"] }), ...first.slice(0, 3)];
    await replaceSnapshots(db, host.id, { snapshots: second, refreshed_at: "2026-01-03T00:00:00Z" });
    expect(await projected()).toEqual(await aggregated());
    expect((await projected()).map((row) => row.tag)).toEqual(["daily", "etc"]);
  });

  it("gives the transaction its triggers back after inserting", async () => {
    const db = getDb();
    const { host } = await seedHost({ db });
    const roles = await db.transaction(async (tx) => {
      // As replaceSnapshots does: the host's row is held before the rows that refer to it go in.
      await tx.update(hosts).set({ snapshotCount: 1 }).where(eq(hosts.id, host.id));
      await insertSnapshots(tx, host.id, [numberedSnapshot(1)], () => true);
      return executeRows<{ role: string }>(
        tx,
        sql`select current_setting('session_replication_role') as role`,
      );
    });
    expect(roles).toEqual([{ role: "origin" }]);
    expect(await db.select().from(snapshots).where(eq(snapshots.hostId, host.id))).toHaveLength(1);
  });

  // PGlite always runs as a superuser (its COPY from the query's blob needs one, too).
  if (engine === "postgres") {
    it("checks each row as usual under a role that is not a superuser", async () => {
      const db = getDb();
      const { host } = await seedHost({ db });
      const role = `fleetback_plain_${randomBytes(4).toString("hex")}`;
      await db.execute(sql.raw(`create role ${role} nosuperuser`));
      try {
        await db.execute(sql.raw(`grant usage on schema ${current().schema} to ${role}`));
        await db.execute(sql.raw(`grant select, insert on ${getTableName(snapshots)} to ${role}`));
        const settings = await db.transaction(async (tx) => {
          await tx.execute(sql.raw(`set local role ${role}`));
          await insertSnapshots(tx, host.id, [numberedSnapshot(1)], () => true);
          return executeRows<{ role: string; superuser: string }>(
            tx,
            sql`select current_setting('session_replication_role') as role,
                       current_setting('is_superuser') as superuser`,
          );
        });
        expect(settings).toEqual([{ role: "origin", superuser: "off" }]);
        expect(await db.select().from(snapshots).where(eq(snapshots.hostId, host.id))).toHaveLength(1);
      } finally {
        await db.execute(sql.raw(`drop owned by ${role}`));
        await db.execute(sql.raw(`drop role ${role}`));
      }
    });
  }

  it("writes into a table with no trigger of its own, which inserting with triggers off would skip", async () => {
    const own = await executeRows<{ tgname: string }>(
      getDb(),
      sql`select tgname from pg_trigger where tgrelid = ${getTableName(snapshots)}::regclass and not tgisinternal`,
    );
    expect(own).toEqual([]);
  });
});
