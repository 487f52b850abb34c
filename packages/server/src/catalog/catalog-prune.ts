/**
 * @module catalog/catalog-prune
 * Keeps a host's catalogue as long as its snapshots (issue 38.3): once retention has forgotten
 * every snapshot of a group older than a version's end, no snapshot can hold that version again,
 * and its row goes. Versions in a gap between kept snapshots stay until the gap reaches the oldest
 * end: they are few (retention thins old snapshots, it does not punch holes in new ones), and
 * search leaves out any version that no snapshot holds anyway.
 */
import { type Database, executeRows } from "@fleetback/db";
import { sql } from "drizzle-orm";

/** Run after the host's snapshot list was replaced; answers how many version rows went. */
export async function pruneForgottenVersions(db: Database, hostId: string): Promise<number> {
  const lineages = await executeRows<{ id: string; oldest: string | null }>(
    db,
    sql`select l.id::text as id,
               (select min(s.time)::text from snapshots s
                 where s.host_id = l.host_id and s.is_own and s.tags @> jsonb_build_array(l.tag)) as oldest
          from catalog_lineages l where l.host_id = ${hostId}`,
  );
  let removed = 0;
  for (const lineage of lineages) {
    const rows = await executeRows<{ n: number }>(
      db,
      sql`with gone as (
            delete from file_versions
             where lineage_id = ${lineage.id}::bigint and until_at is not null
               and until_at <= coalesce(${lineage.oldest}::timestamptz, 'infinity'::timestamptz)
            returning 1)
          select count(*)::int as n from gone`,
    );
    removed += rows[0]?.n ?? 0;
  }
  return removed;
}
