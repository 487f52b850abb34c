import { executeRows, hosts, snapshots, snapshotTags } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import type { Snapshot as WireSnapshot } from "@fleetback/protocol";
import { eq, sql } from "drizzle-orm";
import { expect, it } from "vitest";
import { seedHost } from "../testing/seed.js";
import { SNAPSHOT_WRITE_CHUNK } from "./snapshot-rows.js";
import { decodeCursor, encodeCursor, listSnapshots, replaceSnapshots } from "./snapshot-store.js";

const BASE = Date.parse("2026-01-01T00:00:00Z");

function wireSnapshot(index: number, fields: Partial<WireSnapshot> = {}): WireSnapshot {
  const id = index.toString(16).padStart(64, "0");
  return {
    id,
    short_id: id.slice(0, 8),
    time: new Date(BASE + index * 60_000).toISOString(),
    hostname: "web-1",
    paths: ["/etc"],
    tags: ["etc"],
    size_bytes: 1000 + index,
    file_count: 10 + index,
    ...fields,
  };
}

/** Most recent first, as the agent sends them. */
function report(count: number, from = 0) {
  const list: WireSnapshot[] = [];
  for (let i = from + count - 1; i >= from; i -= 1) {
    list.push(wireSnapshot(i));
  }
  return { snapshots: list, refreshed_at: "2026-11-21T12:00:00Z" };
}

runDbSuite("snapshot store", (getDb) => {
  async function countOf(hostId: string) {
    const [host] = await getDb().select().from(hosts).where(eq(hosts.id, hostId));
    const rows = await getDb().select().from(snapshots).where(eq(snapshots.hostId, hostId));
    return { stored: host?.snapshotCount, rows: rows.length, refreshedAt: host?.snapshotsRefreshedAt };
  }

  it("replaces the list and the count: 3, then 2, then none", async () => {
    const db = getDb();
    const { host } = await seedHost({ db });
    // Its snapshots carry web-1 too: that hostname is one of its own as well.
    const { host: other } = await seedHost({ db }, { name: "other", snapshotHostnames: ["other", "web-1"] });
    await replaceSnapshots(db, other.id, report(4));

    expect(await replaceSnapshots(db, host.id, report(3))).toMatchObject({ count: 3 });
    expect(await countOf(host.id)).toMatchObject({ stored: 3, rows: 3 });

    await replaceSnapshots(db, host.id, report(2, 10));
    const after = await countOf(host.id);
    expect(after).toMatchObject({ stored: 2, rows: 2 });
    expect(after.refreshedAt?.toISOString()).toBe("2026-11-21T12:00:00.000Z");
    const ids = (await listSnapshots(db, host.id, { limit: 10 })).map((s) => s.id);
    expect(ids).toEqual([wireSnapshot(11).id, wireSnapshot(10).id]);

    await replaceSnapshots(db, host.id, { snapshots: [], refreshed_at: "2026-11-21T13:00:00Z" });
    expect(await countOf(host.id)).toMatchObject({ stored: 0, rows: 0 });
    // Another host's list is never touched.
    expect(await countOf(other.id)).toMatchObject({ stored: 4, rows: 4 });
  });

  it("trusts the times of a host's first list (an adopted history) and records first sightings after it", async () => {
    const db = getDb();
    const { host } = await seedHost({ db });
    await replaceSnapshots(db, host.id, report(3));
    await replaceSnapshots(db, host.id, report(5));
    const rows = await db
      .select({ id: snapshots.id, firstSeenAt: snapshots.firstSeenAt })
      .from(snapshots)
      .where(eq(snapshots.hostId, host.id));
    const seen = new Map(rows.map((row) => [row.id, row.firstSeenAt]));
    for (const index of [0, 1, 2]) {
      expect(seen.get(wireSnapshot(index).id)).toBeNull();
    }
    for (const index of [3, 4]) {
      expect(seen.get(wireSnapshot(index).id)).toBeInstanceOf(Date);
    }
  });

  it("writes only the difference: kept rows stay, gone ones go, new ones come, tags follow", async () => {
    const db = getDb();
    const { host } = await seedHost({ db });
    await replaceSnapshots(db, host.id, report(3));
    const rowIdentity = async () =>
      Object.fromEntries(
        (
          await executeRows<{ id: string; xmin: string }>(
            db,
            sql`select id, xmin::text as xmin from ${snapshots} where host_id = ${host.id}`,
          )
        ).map((row) => [row.id, row.xmin]),
      );
    const before = await rowIdentity();
    // 0 is gone, 1 and 2 stay, 3 is new and carries a tag no snapshot had.
    const next = {
      snapshots: [wireSnapshot(3, { tags: ["etc", "weekly"] }), wireSnapshot(2), wireSnapshot(1)],
      refreshed_at: "2026-11-21T13:00:00Z",
    };
    expect(await replaceSnapshots(db, host.id, next)).toMatchObject({ count: 3 });
    const after = await rowIdentity();
    expect(Object.keys(after).sort()).toEqual([1, 2, 3].map((i) => wireSnapshot(i).id).sort());
    // The kept rows were not rewritten: same row version.
    expect(after[wireSnapshot(1).id]).toBe(before[wireSnapshot(1).id]);
    expect(after[wireSnapshot(2).id]).toBe(before[wireSnapshot(2).id]);
    const tags = await db.select().from(snapshotTags).where(eq(snapshotTags.hostId, host.id));
    expect(tags.map((t) => [t.tag, t.snapshotCount, t.latestAt.toISOString()]).sort()).toEqual([
      ["etc", 3, wireSnapshot(3).time],
      ["weekly", 1, wireSnapshot(3).time],
    ]);
    // The same list again changes nothing but the refresh time.
    await replaceSnapshots(db, host.id, { ...next, refreshed_at: "2026-11-21T14:00:00Z" });
    expect(await rowIdentity()).toEqual(after);
    expect((await countOf(host.id)).refreshedAt?.toISOString()).toBe("2026-11-21T14:00:00.000Z");
    // An empty list empties the tags too (freshness reads them).
    await replaceSnapshots(db, host.id, { snapshots: [], refreshed_at: "2026-11-21T15:00:00Z" });
    expect(await rowIdentity()).toEqual({});
    expect(await db.select().from(snapshotTags).where(eq(snapshotTags.hostId, host.id))).toEqual([]);
  });

  it("keeps the old list when a replacement fails half-way (one transaction)", async () => {
    const db = getDb();
    const { host } = await seedHost({ db });
    await replaceSnapshots(db, host.id, report(3));
    const bad = report(SNAPSHOT_WRITE_CHUNK + 5, 100);
    // A NUL character is refused by the database in the second chunk, after the delete and the first chunk.
    const last = bad.snapshots.at(-1);
    if (last) {
      last.hostname = "bad\u0000host";
    }
    await expect(replaceSnapshots(db, host.id, bad)).rejects.toThrow();
    expect(await countOf(host.id)).toMatchObject({ stored: 3, rows: 3 });
  });

  it("keeps one row per repeated id and ignores a report for a deleted host", async () => {
    const db = getDb();
    const { host } = await seedHost({ db });
    const twice = report(2);
    twice.snapshots.push(wireSnapshot(0));
    expect(await replaceSnapshots(db, host.id, twice)).toMatchObject({ count: 2 });
    expect(await replaceSnapshots(db, "01JD0000000000000000000000", report(1))).toBeUndefined();
  });

  it("stores 10,000 snapshots and pages them newest first with a time+id cursor", async () => {
    const db = getDb();
    const { host } = await seedHost({ db });
    const big = report(10_000);
    // Two snapshots in the same second: the id breaks the tie, nothing is skipped or repeated.
    const twin = wireSnapshot(20_000, { time: wireSnapshot(9_999).time });
    big.snapshots.unshift(twin);
    await replaceSnapshots(db, host.id, big);
    expect(await countOf(host.id)).toMatchObject({ stored: 10_001, rows: 10_001 });

    const first = await listSnapshots(db, host.id, { limit: 50 });
    expect(first).toHaveLength(50);
    const expectedFirst = [twin.id, wireSnapshot(9_999).id].sort().reverse();
    expect(first.slice(0, 2).map((s) => s.id)).toEqual(expectedFirst);
    expect(first[2]?.id).toBe(wireSnapshot(9_998).id);

    const seen = new Set<string>();
    let cursor = undefined as ReturnType<typeof decodeCursor>;
    let previous = Number.POSITIVE_INFINITY;
    for (;;) {
      const page = await listSnapshots(db, host.id, { limit: 500, before: cursor });
      for (const s of page) {
        expect(s.time.getTime()).toBeLessThanOrEqual(previous);
        previous = s.time.getTime();
        seen.add(s.id);
      }
      const last = page.at(-1);
      if (page.length < 500 || !last) {
        break;
      }
      cursor = decodeCursor(encodeCursor(last));
    }
    expect(seen.size).toBe(10_001);
  }, 120_000);
});
