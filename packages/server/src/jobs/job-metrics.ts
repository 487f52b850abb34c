/**
 * @module jobs/job-metrics
 * The job counter and duration histogram of /metrics, kept in `job_metrics`. Every place that
 * ends jobs (job reports, reconciliation, the server's own cancel, a retry giving up) calls
 * `recordJobEnds` in the transaction that moved them to a final status: the update only matches
 * active jobs, so each job is counted exactly once, on whichever replica ended it. A scrape then
 * reads a few hundred rows instead of the job history, and the counters never go down when hosts
 * or jobs are deleted.
 */
import { type Database, JOB_METRICS_NOT_STARTED, jobMetrics } from "@fleetback/db";
import { type SQL, sql } from "drizzle-orm";

/**
 * Upper bounds (seconds) of the duration buckets: from a quick check to a day-long first backup.
 * Changing them is safe: stored rows keep their bound and are read into the next larger one.
 */
export const JOB_DURATION_BUCKETS_SECONDS = [
  1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 14400, 28800, 86400,
] as const;

function bucketOf(duration: SQL): SQL {
  const cases = JOB_DURATION_BUCKETS_SECONDS.map(
    (bound) => sql`when ${duration} <= ${sql.raw(String(bound))} then ${sql.raw(String(bound))}`,
  );
  return sql`case when ${duration} is null then ${sql.raw(String(JOB_METRICS_NOT_STARTED))} ${sql.join(cases, sql` `)} else 'Infinity'::float8 end`;
}

/**
 * Counts the given jobs, which the caller has just moved to a final status in the same
 * transaction `db`. Ids of jobs not (yet) final are ignored.
 */
export async function recordJobEnds(db: Database, jobIds: readonly string[]): Promise<void> {
  if (jobIds.length === 0) {
    return;
  }
  const duration = sql.raw("ended.duration");
  await db.execute(sql`
    insert into job_metrics (kind, outcome, le_seconds, count, duration_seconds_sum)
    select ended.kind, ended.status, ${bucketOf(duration)}, count(*), coalesce(sum(${duration}), 0)
      from (
        select kind, status,
               case when started_at is null then null
                    else greatest(0, extract(epoch from (finished_at - started_at)))::float8 end as duration
          from jobs
         where id in (${sql.join(
           jobIds.map((id) => sql`${id}`),
           sql`, `,
         )})
           and finished_at is not null
           and status not in ('queued', 'running')
      ) as ended
     group by 1, 2, 3
    on conflict (kind, outcome, le_seconds) do update
       set count = job_metrics.count + excluded.count,
           duration_seconds_sum = job_metrics.duration_seconds_sum + excluded.duration_seconds_sum`);
}

export interface JobOutcomeStats {
  kind: string;
  outcome: string;
  /** Every job that ended so, started or not. */
  total: number;
  /** Cumulative counts per bound of JOB_DURATION_BUCKETS_SECONDS (same order), started jobs only. */
  buckets: number[];
  /** Started jobs: the histogram's _count. */
  observed: number;
  durationSecondsSum: number;
}

/** The whole table, folded per (kind, outcome) into the histogram's cumulative buckets. */
export async function readJobMetrics(db: Database): Promise<JobOutcomeStats[]> {
  const rows = await db.select().from(jobMetrics);
  const byKey = new Map<string, JobOutcomeStats>();
  for (const row of rows) {
    const key = `${row.kind}\u0000${row.outcome}`;
    const stats = byKey.get(key) ?? {
      kind: row.kind,
      outcome: row.outcome,
      total: 0,
      buckets: JOB_DURATION_BUCKETS_SECONDS.map(() => 0),
      observed: 0,
      durationSecondsSum: 0,
    };
    byKey.set(key, stats);
    const count = Number(row.count);
    const le = Number(row.leSeconds);
    stats.total += count;
    if (le === JOB_METRICS_NOT_STARTED) {
      continue;
    }
    stats.observed += count;
    stats.durationSecondsSum += Number(row.durationSecondsSum);
    // A stored bound is never below the duration, so every bucket at or above it holds the job.
    stats.buckets = stats.buckets.map((cumulative, index) =>
      le <= (JOB_DURATION_BUCKETS_SECONDS[index] ?? 0) ? cumulative + count : cumulative,
    );
  }
  return [...byKey.values()].sort((a, b) =>
    a.kind === b.kind ? a.outcome.localeCompare(b.outcome) : a.kind.localeCompare(b.kind),
  );
}
