import { type Database, executeRows } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import { sql } from "drizzle-orm";
import { expect, it } from "vitest";
import { seedHost } from "../testing/seed.js";
import { applyCatalogPart } from "./catalog-apply.js";
import { delta, entry, seedGroup, snapshotIdOf, timeOf } from "./catalog-test-support.js";

interface VersionRow extends Record<string, unknown> {
  path: string;
  size: number;
  from_at: string;
  until_at: string | null;
}

/** Every version of the host's catalogue as `path size from→until` (snapshot indexes). */
async function versionsOf(db: Database, hostId: string): Promise<string[]> {
  const rows = await executeRows<VersionRow>(
    db,
    sql`select case when d.path = '/' then '/' || v.name else d.path || '/' || v.name end as path,
               v.size::int as size, v.from_at, v.until_at
          from file_versions v
          join catalog_lineages l on l.id = v.lineage_id
          join catalog_dirs d on d.lineage_id = v.lineage_id and d.id = v.dir_id
         where l.host_id = ${hostId}
         order by 1, v.from_at`,
  );
  const index = (at: string | null) => (at === null ? "" : String(new Date(at).getUTCMinutes()));
  return rows.map((row) => `${row.path} ${row.size} ${index(row.from_at)}→${index(row.until_at)}`);
}

runDbSuite("catalogue deltas", (getDb) => {
  async function host() {
    const db = getDb();
    const { host } = await seedHost({ db });
    await seedGroup(db, host.id);
    return host.id;
  }

  it("applies a full listing in parts, answering only the last, then a change and a removal", async () => {
    const db = getDb();
    const hostId = await host();
    const first = { parts: 2, base_snapshot_id: null };
    expect(
      await applyCatalogPart(
        db,
        hostId,
        delta(0, { ...first, changed: [entry("/etc/hosts", 10), entry("/etc/a", 1)] }),
      ),
    ).toBeUndefined();
    expect(
      await applyCatalogPart(db, hostId, delta(0, { ...first, part: 1, changed: [entry("/etc/b", 2)] })),
    ).toEqual({ status: "applied" });
    expect(
      await applyCatalogPart(
        db,
        hostId,
        delta(1, { changed: [entry("/etc/hosts", 11)], removed: ["/etc/a"] }),
      ),
    ).toEqual({ status: "applied" });
    expect(await versionsOf(db, hostId)).toEqual([
      "/etc/a 1 0→1",
      "/etc/b 2 0→",
      "/etc/hosts 10 0→1",
      "/etc/hosts 11 1→",
    ]);
  });

  it("asks for a full resend on a base it does not hold, and folds unchanged versions into it", async () => {
    const db = getDb();
    const hostId = await host();
    await applyCatalogPart(db, hostId, delta(0, { changed: [entry("/etc/a", 1), entry("/etc/b", 2)] }));
    const answer = await applyCatalogPart(db, hostId, delta(2, { base_snapshot_id: snapshotIdOf(1) }));
    expect(answer).toMatchObject({ status: "resend_full" });
    expect(
      await applyCatalogPart(
        db,
        hostId,
        delta(2, { base_snapshot_id: null, changed: [entry("/etc/a", 1), entry("/etc/c", 3)] }),
      ),
    ).toEqual({ status: "applied" });
    expect(await versionsOf(db, hostId)).toEqual(["/etc/a 1 0→", "/etc/b 2 0→2", "/etc/c 3 2→"]);
  });

  it("undoes an unfinished delta when it starts over, so a disconnect leaves no half snapshot", async () => {
    const db = getDb();
    const hostId = await host();
    await applyCatalogPart(db, hostId, delta(0, { changed: [entry("/etc/a", 1), entry("/etc/b", 2)] }));
    const parts = { parts: 2 };
    await applyCatalogPart(
      db,
      hostId,
      delta(1, { ...parts, changed: [entry("/etc/a", 5)], removed: ["/etc/b"] }),
    );
    expect(await versionsOf(db, hostId)).toEqual(["/etc/a 1 0→1", "/etc/a 5 1→", "/etc/b 2 0→1"]);
    // The agent reconnects and sends the delta again, from part 0.
    await applyCatalogPart(db, hostId, delta(1, { ...parts, changed: [entry("/etc/a", 5)] }));
    expect(await applyCatalogPart(db, hostId, delta(1, { ...parts, part: 1, removed: ["/etc/b"] }))).toEqual({
      status: "applied",
    });
    expect(await versionsOf(db, hostId)).toEqual(["/etc/a 1 0→1", "/etc/a 5 1→", "/etc/b 2 0→1"]);
    const [lineage] = await executeRows<{ snapshot_id: string; pending_snapshot_id: string | null }>(
      db,
      sql`select snapshot_id, pending_snapshot_id from catalog_lineages where host_id = ${hostId}`,
    );
    expect(lineage).toEqual({ snapshot_id: snapshotIdOf(1), pending_snapshot_id: null });
  });

  it("refuses what it cannot take and says applied again for a delta it already holds", async () => {
    const db = getDb();
    const hostId = await host();
    const other = await host();
    expect(await applyCatalogPart(db, hostId, delta(0, { tag: "home" }))).toEqual({
      status: "refused",
      error: "home is not a source group of this host",
    });
    await applyCatalogPart(db, hostId, delta(3, { base_snapshot_id: null, changed: [entry("/etc/a", 1)] }));
    expect(await applyCatalogPart(db, hostId, delta(3, { base_snapshot_id: null }))).toEqual({
      status: "applied",
    });
    expect(await applyCatalogPart(db, hostId, delta(2, { base_snapshot_id: snapshotIdOf(3) }))).toMatchObject(
      {
        status: "refused",
      },
    );
    expect(
      await applyCatalogPart(db, hostId, delta(4, { base_snapshot_id: snapshotIdOf(3), parts: 3, part: 1 })),
    ).toMatchObject({ status: "refused", error: "part 1 arrived without the parts before it" });
    // Another host's catalogue of a group with the same name is its own.
    expect(await applyCatalogPart(db, other, delta(0, { changed: [entry("/etc/a", 9)] }))).toEqual({
      status: "applied",
    });
    expect(await versionsOf(db, hostId)).toEqual(["/etc/a 1 3→"]);
    expect(await versionsOf(db, other)).toEqual(["/etc/a 9 0→"]);
    expect(timeOf(3)).toContain("03:03");
  });
});
