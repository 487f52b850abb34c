/**
 * @module catalog/catalog-test-support
 * Builds catalogue deltas and the matching snapshot rows for the catalogue's tests: a snapshot is
 * a map of path to `size:mtime`, and each test states its files that way.
 */
import { type Database, hosts, sourceGroups } from "@fleetback/db";
import type { CatalogDelta, CatalogEntry, Snapshot as WireSnapshot } from "@fleetback/protocol";
import { eq } from "drizzle-orm";
import { ulid } from "ulidx";
import { replaceSnapshots } from "../snapshots/snapshot-store.js";

export function snapshotIdOf(index: number): string {
  return index.toString(16).padStart(64, "a");
}

export function timeOf(index: number): string {
  return new Date(Date.UTC(2026, 10, 1, 3, index)).toISOString();
}

export function entry(path: string, size: number, mtimeDay = 1): CatalogEntry {
  return { path, type: "file", size, mtime: new Date(Date.UTC(2026, 9, mtimeDay)).toISOString() };
}

export function delta(index: number, fields: Partial<CatalogDelta> = {}): CatalogDelta {
  return {
    snapshot_id: snapshotIdOf(index),
    tag: "etc",
    time: timeOf(index),
    base_snapshot_id: index === 0 ? null : snapshotIdOf(index - 1),
    part: 0,
    parts: 1,
    changed: [],
    removed: [],
    ...fields,
  };
}

export async function seedGroup(db: Database, hostId: string, name = "etc"): Promise<void> {
  await db.insert(sourceGroups).values({ id: ulid(), hostId, name, includes: ["/etc"] });
}

/** The host's snapshot list: snapshots `indexes` of `tag`, made on the host, as its agent reports them. */
export async function reportSnapshots(db: Database, hostId: string, indexes: number[], tag = "etc") {
  const [host] = await db.select({ hostname: hosts.resticHost }).from(hosts).where(eq(hosts.id, hostId));
  const list: WireSnapshot[] = indexes
    .map((index) => ({
      id: snapshotIdOf(index),
      short_id: snapshotIdOf(index).slice(0, 8),
      time: timeOf(index),
      hostname: host?.hostname ?? "",
      paths: ["/etc"],
      tags: [tag],
      size_bytes: 1,
      file_count: 1,
    }))
    .reverse();
  await replaceSnapshots(db, hostId, { snapshots: list, refreshed_at: timeOf(99) });
}
