/**
 * @module restore/snapshot-search
 * The wizard's snapshot picker: the host's cached snapshots, newest first, narrowed by one search
 * term that matches the start of an id or short id, the start of the UTC time as printed
 * (`2026-11-21`, `2026-11-21T03`), or part of a tag.
 */
import { type Database, type Snapshot, snapshots } from "@fleetback/db";
import { and, desc, eq, like, or, sql } from "drizzle-orm";

export const SNAPSHOT_PICK_LIMIT = 50;

function likePrefix(term: string): string {
  return `${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export async function searchSnapshots(
  db: Database,
  hostId: string,
  term: string,
  limit = SNAPSHOT_PICK_LIMIT,
): Promise<Snapshot[]> {
  const q = term.trim();
  const host = eq(snapshots.hostId, hostId);
  const where =
    q === ""
      ? host
      : and(
          host,
          or(
            like(snapshots.id, likePrefix(q.toLowerCase())),
            like(snapshots.shortId, likePrefix(q.toLowerCase())),
            sql`to_char(${snapshots.time} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS') like ${likePrefix(q.toUpperCase())}`,
            sql`exists (select 1 from jsonb_array_elements_text(${snapshots.tags}) as tag where tag ilike ${`%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`})`,
          ),
        );
  return db
    .select()
    .from(snapshots)
    .where(where)
    .orderBy(desc(snapshots.time), desc(snapshots.id))
    .limit(limit);
}
