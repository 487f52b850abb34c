/**
 * @module upkeep
 * What autovacuum does for PostgreSQL, done by hand for the embedded database (PGlite runs
 * PostgreSQL in single-user mode: no autovacuum, no background writer or checkpointer). Without
 * it a long-running install slows and grows: every replaced snapshot list and pruned job log
 * leaves dead rows nobody reclaims, the planner's statistics go stale, and WAL piles up.
 *
 * One pass reads the schema's table statistics and, with autovacuum's own thresholds, vacuums
 * (and analyzes) the tables with the most dead rows, analyzes those changed enough since their
 * last analyze, then checkpoints so the WAL can be recycled. A pass vacuums at most `maxVacuums`
 * tables: PGlite serves one query at a time, so each pass is a bounded pause, and the next pass
 * takes the rest.
 */
import { sql } from "drizzle-orm";
import { quoteIdentifier } from "./connect.js";
import { type Database, executeRows } from "./database.js";

/** autovacuum_vacuum_threshold and _scale_factor, PostgreSQL's defaults. */
const VACUUM_BASE = 50;
const VACUUM_SCALE = 0.2;
/** autovacuum_analyze_threshold and _scale_factor. */
const ANALYZE_BASE = 50;
const ANALYZE_SCALE = 0.1;

export interface UpkeepOptions {
  /** Tables vacuumed in one pass; the rest wait for the next. */
  maxVacuums?: number;
  /** CHECKPOINT after the pass (PGlite; PostgreSQL's own checkpointer needs no help). */
  checkpoint?: boolean;
}

export interface UpkeepReport {
  vacuumed: string[];
  analyzed: string[];
  checkpointed: boolean;
}

interface TableStats {
  table: string;
  live: number;
  dead: number;
  changed: number;
}

async function tableStats(db: Database): Promise<TableStats[]> {
  const rows = await executeRows<{ table: string; live: string; dead: string; changed: string }>(
    db,
    sql`select relname as table, n_live_tup::text as live, n_dead_tup::text as dead,
               n_mod_since_analyze::text as changed
          from pg_stat_user_tables where schemaname = current_schema()`,
  );
  return rows.map((row) => ({
    table: row.table,
    live: Number(row.live),
    dead: Number(row.dead),
    changed: Number(row.changed),
  }));
}

export async function upkeep(db: Database, options: UpkeepOptions = {}): Promise<UpkeepReport> {
  const maxVacuums = options.maxVacuums ?? 3;
  // A session reports its row counts at most once a second: without this, PGlite's one session
  // would hide the churn of the last second from the pass that should clean it up.
  await db.execute(sql`select pg_stat_force_next_flush()`);
  const stats = await tableStats(db);
  const vacuum = stats
    .filter((row) => row.dead > VACUUM_BASE + VACUUM_SCALE * row.live)
    .sort((a, b) => b.dead - a.dead || (a.table < b.table ? -1 : 1))
    .slice(0, maxVacuums)
    .map((row) => row.table);
  const analyze = stats
    .filter((row) => !vacuum.includes(row.table) && row.changed > ANALYZE_BASE + ANALYZE_SCALE * row.live)
    .map((row) => row.table)
    .sort();
  const [schema] = await executeRows<{ name: string }>(db, sql`select current_schema() as name`);
  const qualified = (table: string) =>
    `${quoteIdentifier(schema?.name ?? "public")}.${quoteIdentifier(table)}`;
  for (const table of vacuum) {
    // Plain VACUUM: it makes the dead rows' space reusable without locking the table out, so
    // the files stop growing; VACUUM FULL would rewrite them and block every query meanwhile.
    await db.execute(sql.raw(`VACUUM (ANALYZE) ${qualified(table)}`));
  }
  for (const table of analyze) {
    await db.execute(sql.raw(`ANALYZE ${qualified(table)}`));
  }
  const worked = vacuum.length + analyze.length > 0;
  if (worked && options.checkpoint) {
    await db.execute(sql`CHECKPOINT`);
  }
  return { vacuumed: vacuum, analyzed: analyze, checkpointed: worked && options.checkpoint === true };
}
