/**
 * @module snapshots/snapshot-store
 * The host's cached snapshot projection. Each `snapshots.report` is authoritative: the old list
 * and the host's snapshot_count are replaced in one transaction (an empty list is a real answer:
 * the repository has no snapshots), by deleting the ids it no longer names and inserting the new
 * (snapshot-rows.ts). A report sent in parts arrives here once, whole, from report-assembler.ts.
 * Reads are newest first, paged by a (time, id) cursor that the (host_id, time desc) index serves.
 * Another machine's snapshot in a shared repository is stored too, marked `is_own` false
 * (snapshot-owner.ts): the host's count and the per-tag projection cover its own only.
 */
import { type Database, hosts, type Snapshot, snapshots, snapshotTags } from "@fleetback/db";
import type { SnapshotsReport, Snapshot as WireSnapshot } from "@fleetback/protocol";
import { and, desc, eq, lt, or, type SQL, sql } from "drizzle-orm";
import { recordSnapshotEvidence } from "../evidence/evidence-record.js";
import { isOwnSnapshot } from "../hosts/snapshot-owner.js";
import { deleteSnapshotIds, insertSnapshots, storedSnapshotIds } from "./snapshot-rows.js";
import { replaceSnapshotTags, summarizeTags } from "./snapshot-tags.js";

export interface ReplaceResult {
  /** The host's own snapshots. */
  count: number;
  /** Other machines' snapshots in the same repository. */
  otherCount: number;
  refreshedAt: Date;
}

/** Replaces the host's snapshots; false (nothing written) when the host no longer exists. */
export async function replaceSnapshots(
  db: Database,
  hostId: string,
  report: SnapshotsReport,
): Promise<ReplaceResult | undefined> {
  const refreshedAt = new Date(report.refreshed_at);
  // The composite key is (host, id): a repeated id in one report is kept once (the first, newest).
  const reported = new Map<string, WireSnapshot>();
  for (const snapshot of report.snapshots) {
    if (!reported.has(snapshot.id)) {
      reported.set(snapshot.id, snapshot);
    }
  }
  // Every query below uses tx: PGlite has one connection, a query on db would wait forever.
  return db.transaction(async (tx) => {
    // The row lock is taken here, before counting, so that a hello adding a hostname
    // (snapshot-owner.ts) waits for this report instead of classifying rows it is replacing.
    const [host] = await tx
      .select({ names: hosts.snapshotHostnames, refreshedBefore: hosts.snapshotsRefreshedAt })
      .from(hosts)
      .where(eq(hosts.id, hostId))
      .for("update");
    if (host === undefined) {
      return undefined;
    }
    const names = new Set(host.names);
    const isOwn = (snapshot: WireSnapshot) => isOwnSnapshot(names, snapshot.hostname);
    const own = [...reported.values()].filter(isOwn);
    const count = own.length;
    const otherCount = reported.size - count;
    await tx
      .update(hosts)
      .set({ snapshotCount: count, otherSnapshotCount: otherCount, snapshotsRefreshedAt: refreshedAt })
      .where(eq(hosts.id, hostId));
    // A snapshot never changes under its id (restic writes a new one to change tags), so only the
    // difference is written: the usual report after a backup adds one row to thousands.
    const stored = await storedSnapshotIds(tx, hostId);
    const storedSet = new Set(stored);
    const gone = stored.filter((id) => !reported.has(id));
    const added = [...reported.values()].filter((snapshot) => !storedSet.has(snapshot.id));
    if (gone.length === 0 && added.length === 0) {
      return { count, otherCount, refreshedAt };
    }
    const kept = stored.length - gone.length;
    if (kept === 0 && gone.length > 0) {
      // Nothing stays: one statement instead of a list of every id.
      await tx.delete(snapshots).where(eq(snapshots.hostId, hostId));
    } else {
      await deleteSnapshotIds(tx, hostId, gone);
    }
    await insertSnapshots(tx, hostId, added, isOwn);
    await recordSnapshotEvidence(tx, hostId, added.filter(isOwn), refreshedAt);
    if (host.refreshedBefore === null) {
      // The host's first list: a repository adopted with its history, made before the server knew
      // the host. Sighting them now says nothing about their times, so they are trusted as rows
      // from before first_seen_at existed are (retention/suspect-snapshots.ts).
      await tx.update(snapshots).set({ firstSeenAt: null }).where(eq(snapshots.hostId, hostId));
    }
    await replaceSnapshotTags(tx, hostId, summarizeTags(own));
    return { count, otherCount, refreshedAt };
  });
}

/**
 * Drops snapshots a keeper's forget removed (keepers/): the keeper reports no list of the
 * repository it keeps, and the host's next list would show them gone only after its next job.
 * Counts and the per-tag projection follow from the rows that stay.
 */
export async function removeSnapshots(db: Database, hostId: string, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) {
    return;
  }
  await db.transaction(async (tx) => {
    const [host] = await tx.select({ id: hosts.id }).from(hosts).where(eq(hosts.id, hostId)).for("update");
    if (host === undefined) {
      return;
    }
    await deleteSnapshotIds(tx, hostId, [...ids]);
    await tx.execute(
      sql`update ${hosts} set
            snapshot_count = (select count(*) from ${snapshots} where host_id = ${hostId} and is_own),
            other_snapshot_count = (select count(*) from ${snapshots} where host_id = ${hostId} and not is_own)
          where id = ${hostId}`,
    );
    await tx.delete(snapshotTags).where(eq(snapshotTags.hostId, hostId));
    await tx.execute(
      sql`insert into ${snapshotTags} (host_id, tag, latest_at, snapshot_count)
          select ${hostId}, t.tag, max(s.time), count(*)::int
          from ${snapshots} s cross join lateral jsonb_array_elements_text(s.tags) as t(tag)
          where s.host_id = ${hostId} and s.is_own
          group by t.tag`,
    );
  });
}

export interface SnapshotCursor {
  time: Date;
  id: string;
}

/** The cursor as it travels in `before`: `<ISO time>_<id>`. */
export function encodeCursor(snapshot: Pick<Snapshot, "time" | "id">): string {
  return `${snapshot.time.toISOString()}_${snapshot.id}`;
}

export function decodeCursor(value: string): SnapshotCursor | undefined {
  const at = value.indexOf("_");
  if (at <= 0) {
    return undefined;
  }
  const time = new Date(value.slice(0, at));
  const id = value.slice(at + 1);
  if (Number.isNaN(time.getTime()) || id === "") {
    return undefined;
  }
  return { time, id };
}

export interface SnapshotFilter {
  /** Only snapshots carrying every one of these tags (a source group's name is its tag). */
  tags?: readonly string[] | undefined;
}

export async function listSnapshots(
  db: Database,
  hostId: string,
  options: { limit: number; before?: SnapshotCursor | undefined } & SnapshotFilter,
): Promise<Snapshot[]> {
  const { before } = options;
  const conditions: SQL[] = [eq(snapshots.hostId, hostId)];
  if (before) {
    const older = or(
      lt(snapshots.time, before.time),
      and(eq(snapshots.time, before.time), lt(snapshots.id, before.id)),
    );
    if (older) {
      conditions.push(older);
    }
  }
  for (const tag of new Set(options.tags ?? [])) {
    conditions.push(sql`${snapshots.tags} @> ${JSON.stringify([tag])}::jsonb`);
  }
  const where = and(...conditions);
  return db
    .select()
    .from(snapshots)
    .where(where)
    .orderBy(desc(snapshots.time), desc(snapshots.id))
    .limit(options.limit);
}

/** The tags the host's snapshots carry, by name, from the per-tag projection. */
export async function listSnapshotTags(db: Database, hostId: string): Promise<string[]> {
  const rows = await db
    .select({ tag: snapshotTags.tag })
    .from(snapshotTags)
    .where(eq(snapshotTags.hostId, hostId))
    .orderBy(snapshotTags.tag);
  return rows.map((row) => row.tag);
}

export function snapshotJson(snapshot: Snapshot) {
  return {
    id: snapshot.id,
    short_id: snapshot.shortId,
    time: snapshot.time,
    hostname: snapshot.hostname,
    paths: snapshot.paths,
    tags: snapshot.tags,
    size_bytes: snapshot.sizeBytes,
    file_count: snapshot.fileCount,
    /** False: another machine's snapshot in a shared repository (issue 31). */
    own: snapshot.isOwn,
  };
}
