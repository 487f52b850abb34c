/**
 * @module Counters behind the Prometheus endpoint (migration 0010): written where jobs end and
 * where notification deliveries fail, read whole at every scrape. They live in the database so
 * every replica reports the same monotonic values, and stay a few hundred rows however long the
 * job history grows.
 */
import { sql } from "drizzle-orm";
import { bigint, check, doublePrecision, pgTable, primaryKey, text } from "drizzle-orm/pg-core";

/** `le_seconds` of a job that ended before an agent started it: it has no duration. */
export const JOB_METRICS_NOT_STARTED = -1;

export const jobMetrics = pgTable(
  "job_metrics",
  {
    kind: text("kind").notNull(),
    // The job's final status: succeeded, failed, cancelled or lost.
    outcome: text("outcome").notNull(),
    // Upper bound of the smallest duration bucket the job fits ('Infinity' above the largest), or
    // JOB_METRICS_NOT_STARTED. Not constrained to today's buckets: older rows keep theirs.
    leSeconds: doublePrecision("le_seconds").notNull(),
    count: bigint("count", { mode: "number" }).notNull().default(0),
    durationSecondsSum: doublePrecision("duration_seconds_sum").notNull().default(0),
  },
  (t) => [
    primaryKey({ name: "job_metrics_pkey", columns: [t.kind, t.outcome, t.leSeconds] }),
    check("job_metrics_count_check", sql`${t.count} >= 0`),
  ],
);

/** Alert deliveries that ended failed, per channel kind; kept when the channel is deleted. */
export const notificationFailureCounts = pgTable(
  "notification_failure_counts",
  {
    channelKind: text("channel_kind").primaryKey(),
    failures: bigint("failures", { mode: "number" }).notNull().default(0),
  },
  (t) => [check("notification_failure_counts_failures_check", sql`${t.failures} >= 0`)],
);

export type JobMetricsRow = typeof jobMetrics.$inferSelect;
export type NotificationFailureCount = typeof notificationFailureCounts.$inferSelect;
