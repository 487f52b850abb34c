/**
 * @module snapshots/snapshot-rows
 * The statements that read and write one host's snapshot rows for snapshot-store.ts, each with a
 * fixed number of bind parameters however many rows it carries: one array per column, which the
 * database unnests, or on PGlite a COPY. Drizzle's multi-row `insert().values()` builds nine
 * parameters per row in JavaScript, and for a report of 10,000 new snapshots that building took
 * longer than PGlite's own inserting (issue 19, B5).
 */
import { type Database, executeRows, pgliteCopy, snapshots, withoutTriggers } from "@fleetback/db";
import type { Snapshot as WireSnapshot } from "@fleetback/protocol";
import { getTableName, sql } from "drizzle-orm";

/** Rows per statement: arrays bind no parameter per row, this only bounds one message's size. */
export const SNAPSHOT_WRITE_CHUNK = 5_000;

/** Ids are hex (the protocol's SnapshotId), so a space cannot occur in one. */
const ID_SEPARATOR = " ";

/**
 * The ids stored for the host. One string instead of a row per id: reading 10,000 rows through
 * the driver cost PGlite ~40 ms, splitting one string well under 10.
 */
export async function storedSnapshotIds(db: Database, hostId: string): Promise<string[]> {
  const [row] = await executeRows<{ ids: string | null }>(
    db,
    sql`select string_agg(${snapshots.id}, ${ID_SEPARATOR}) as ids from ${snapshots}
        where ${snapshots.hostId} = ${hostId}`,
  );
  return row?.ids ? row.ids.split(ID_SEPARATOR) : [];
}

function chunks<T>(list: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let start = 0; start < list.length; start += SNAPSHOT_WRITE_CHUNK) {
    out.push(list.slice(start, start + SNAPSHOT_WRITE_CHUNK));
  }
  return out;
}

/** A JavaScript array bound as one parameter (drizzle's `sql` would spread it into a list). */
function textArray(values: readonly string[]) {
  return sql`${sql.param(values)}::text[]`;
}

export async function deleteSnapshotIds(db: Database, hostId: string, ids: readonly string[]): Promise<void> {
  for (const part of chunks(ids)) {
    await db.execute(
      sql`delete from ${snapshots} where ${snapshots.hostId} = ${hostId} and ${snapshots.id} = any(${textArray(part)})`,
    );
  }
}

const COLUMNS = [
  "id",
  "short_id",
  "time",
  "hostname",
  "paths",
  "tags",
  "size_bytes",
  "file_count",
  "is_own",
] as const;

/**
 * A time as toISOString writes it: `YYYY-MM-DDTHH:MM:SS.mmmZ` with a valid date. Days past the 28th
 * go to Date, which rolls 2026-02-30 over into March; so does a leap second, which Date refuses.
 */
const ISO_MILLIS = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|1\d|2[0-8])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}Z$/;

/**
 * The time to the millisecond, which the paging cursor relies on. A time already written so (as
 * the agent sends it) is kept as it is: Date would give back the same string, and parsing and
 * printing 10,000 of them cost ~5 ms of a report (issue 19, B5).
 */
function millisecondTime(time: string): string {
  if (ISO_MILLIS.test(time)) {
    return time;
  }
  const parsed = new Date(time);
  if (Number.isNaN(parsed.getTime())) {
    // A leap second (:60), which RFC 3339 and the wire pattern admit and Date refuses: stored as
    // the second before it, rather than failing the host's whole report.
    return new Date(time.replace(/(T\d\d:\d\d):60/, "$1:59")).toISOString();
  }
  return parsed.toISOString();
}

/**
 * restic before 0.17 keeps no summary in a snapshot, and the agent reports its size and file count
 * as 0 (the wire requires both): stored as null, unknown, never shown as 0. A snapshot of 0 bytes
 * in 0 files is not one restic 0.17+ makes of a real backup (migration 0022 blanks the same rows).
 */
export function unknownSize(snapshot: Pick<WireSnapshot, "size_bytes" | "file_count">): boolean {
  return snapshot.size_bytes === 0 && snapshot.file_count === 0;
}

/**
 * A snapshot's columns after host_id, converted as the query builder would (times to the
 * millisecond; jsonb as JSON text), all as text so that COPY and both drivers take them alike.
 */
function columnValues(snapshot: WireSnapshot, own: boolean): (string | null)[] {
  return [
    snapshot.id,
    snapshot.short_id,
    millisecondTime(snapshot.time),
    snapshot.hostname,
    JSON.stringify(snapshot.paths),
    JSON.stringify(snapshot.tags),
    unknownSize(snapshot) ? null : String(snapshot.size_bytes),
    unknownSize(snapshot) ? null : String(snapshot.file_count),
    own ? "t" : "f",
  ];
}

async function insertByUnnest(
  db: Database,
  hostId: string,
  rows: readonly (string | null)[][],
): Promise<void> {
  const column = (index: number) => textArray(rows.map((row) => row[index] ?? ""));
  await db.execute(
    sql`insert into ${snapshots} (host_id, ${sql.raw(COLUMNS.join(", "))})
        select ${hostId}, r.id, r.short_id, r.time::timestamptz, r.hostname, r.paths::jsonb, r.tags::jsonb,
               nullif(r.size_bytes, '')::bigint, nullif(r.file_count, '')::bigint, r.is_own::boolean
        from unnest(${sql.join(
          COLUMNS.map((_, index) => column(index)),
          sql`, `,
        )}) as r(${sql.raw(COLUMNS.join(", "))})`,
  );
}

/**
 * Inserts `list` (distinct ids, none stored yet; `isOwn` tells the host's own from other machines') by COPY on PGlite, by INSERT from unnested arrays
 * on PostgreSQL, with the foreign key's check of each row off (withoutTriggers): the caller's
 * transaction holds the host's row, as replaceSnapshots' update does until commit, so the host
 * cannot be deleted under the rows.
 */
export async function insertSnapshots(
  db: Database,
  hostId: string,
  list: readonly WireSnapshot[],
  isOwn: (snapshot: WireSnapshot) => boolean,
): Promise<void> {
  if (list.length === 0) {
    return;
  }
  const copy = pgliteCopy(db);
  await withoutTriggers(db, async () => {
    for (const part of chunks(list)) {
      const rows = part.map((snapshot) => columnValues(snapshot, isOwn(snapshot)));
      if (copy) {
        await copy(
          getTableName(snapshots),
          ["host_id", ...COLUMNS],
          rows.map((row) => [hostId, ...row]),
        );
      } else {
        await insertByUnnest(db, hostId, rows);
      }
    }
  });
}
