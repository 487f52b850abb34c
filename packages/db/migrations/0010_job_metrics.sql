-- Prometheus metrics (issue 16): counters that /metrics reads at scrape time, kept cluster-wide
-- and monotonic in the database instead of in one replica's memory, and cheap to read whatever the
-- size of the job history or the notification log (a few hundred rows at most).
--   job_metrics: per job kind, outcome (the final status) and duration bucket, how many jobs
--     ended and the sum of their durations. Written in the transaction that ends the job, so every
--     job is counted once. le_seconds is the upper bound of the smallest bucket the duration fits
--     ('Infinity' above the largest), or -1 for a job that ended before an agent started it (no
--     duration; counted in fleetback_jobs_total only). Rows outlive their hosts: a counter never
--     goes down when history is deleted.
--   notification_failure_counts: per channel kind, alert deliveries that ended failed after their
--     retries; written with the notification_log row, and kept when a channel is deleted.
-- New tables only: transactional, and migrations run under an advisory lock.
CREATE TABLE job_metrics (
  kind text NOT NULL,
  outcome text NOT NULL,
  le_seconds double precision NOT NULL,
  count bigint NOT NULL DEFAULT 0 CONSTRAINT job_metrics_count_check CHECK (count >= 0),
  duration_seconds_sum double precision NOT NULL DEFAULT 0,
  CONSTRAINT job_metrics_pkey PRIMARY KEY (kind, outcome, le_seconds)
);
--> statement-breakpoint
CREATE TABLE notification_failure_counts (
  channel_kind text PRIMARY KEY,
  failures bigint NOT NULL DEFAULT 0 CONSTRAINT notification_failure_counts_failures_check CHECK (failures >= 0)
);
