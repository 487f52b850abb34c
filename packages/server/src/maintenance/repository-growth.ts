/**
 * @module maintenance/repository-growth
 * How much the fleet's repositories store, now and day by day. Each repo.stats that carries a
 * size also writes the host's row of the day in repository_sizes (the latest report of a UTC day
 * wins); the fleet total of a day is then the sum of every host's latest known size on that day.
 * The sum is computed in the database from per-host changes, so a page reads one row per day
 * whatever the fleet size.
 */
import { type Database, executeRows, type RepoStats, repoStats, repositorySizes } from "@fleetback/db";
import { count, sql } from "drizzle-orm";
import { utcDay } from "../clock.js";

/** Days the dashboard's chart covers, today included. */
export const GROWTH_DAYS = 30;

const DAY_MS = 86_400_000;

/** Records the host's repository size of `now`'s UTC day from its repo_stats row as it stands. */
export async function recordRepositorySize(
  db: Database,
  stats: Pick<RepoStats, "hostId" | "rawSizeBytes" | "totalSizeBytes">,
  now: Date,
): Promise<void> {
  if (stats.rawSizeBytes === null && stats.totalSizeBytes === null) {
    return;
  }
  const sizes = { rawSizeBytes: stats.rawSizeBytes, totalSizeBytes: stats.totalSizeBytes, recordedAt: now };
  await db
    .insert(repositorySizes)
    .values({ hostId: stats.hostId, day: utcDay(now), ...sizes })
    .onConflictDoUpdate({ target: [repositorySizes.hostId, repositorySizes.day], set: sizes });
}

export interface GrowthPoint {
  /** UTC day, YYYY-MM-DD. */
  day: string;
  storedBytes: number;
}

export interface RepositoryGrowth {
  /** What every repository stores now (repo_stats), summed over the hosts that reported it. */
  storedBytes: number;
  hostsReporting: number;
  /** One point per UTC day of the window, oldest first; a day without reports carries forward. */
  days: GrowthPoint[];
  /**
   * The first day of the window with a figure (a size reported on or before it); the days
   * before it have none (their 0 is no measurement). Null when no day has one.
   */
  firstDay: string | null;
}

export async function fleetRepositoryGrowth(
  db: Database,
  now: Date,
  window: number = GROWTH_DAYS,
): Promise<RepositoryGrowth> {
  const [current] = await db
    .select({
      storedBytes: sql<number>`coalesce(sum(${repoStats.rawSizeBytes}), 0)::float8`,
      hostsReporting: count(repoStats.rawSizeBytes),
    })
    .from(repoStats);
  const start = utcDay(new Date(now.getTime() - (window - 1) * DAY_MS));
  const end = utcDay(now);
  // Each host's last size on or before the first day stands as its starting point, then each
  // recorded day adds its change against the host's previous size.
  const changes = await executeRows<{ day: string; delta: number }>(
    db,
    sql`select d.day::text as day, sum(d.delta)::float8 as delta from (
          select p.day, p.raw - coalesce(lag(p.raw) over (partition by p.host_id order by p.day), 0) as delta
          from (
            select r.host_id, r.day, r.raw_size_bytes as raw from ${repositorySizes} r
             where r.day > ${start}::date and r.day <= ${end}::date and r.raw_size_bytes is not null
            union all
            select h.id, ${start}::date, b.raw from hosts h cross join lateral (
              select r.raw_size_bytes as raw from ${repositorySizes} r
               where r.host_id = h.id and r.day <= ${start}::date and r.raw_size_bytes is not null
               order by r.day desc limit 1
            ) b
          ) p
        ) d group by d.day order by d.day`,
  );
  const byDay = new Map(changes.map((row) => [row.day, Number(row.delta)]));
  const days: GrowthPoint[] = [];
  let total = 0;
  let firstDay: string | null = null;
  for (let i = window - 1; i >= 0; i--) {
    const day = utcDay(new Date(now.getTime() - i * DAY_MS));
    if (firstDay === null && byDay.has(day)) {
      firstDay = day;
    }
    total += byDay.get(day) ?? 0;
    days.push({ day, storedBytes: total });
  }
  return {
    storedBytes: Number(current?.storedBytes ?? 0),
    hostsReporting: Number(current?.hostsReporting ?? 0),
    days,
    firstDay,
  };
}
