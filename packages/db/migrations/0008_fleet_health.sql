-- Fleet health (issue 16): freshness is judged from the repository's own snapshots, in the time
-- zone the agent's scheduler reads its cron expressions in.
--   hosts.time_zone: the IANA zone the agent's hello reports (null before such a hello; the
--     server's FLEETBACK_TZ stands for it).
--   source_groups.grace_seconds: how long after its last snapshot a group may go without a new
--     one before it is overdue; null is the default, one schedule interval plus an hour.
--   snapshot_tags: per host and tag, the newest snapshot and how many carry the tag, rewritten
--     with the cached snapshots on each report, so judging every group of the fleet is one
--     indexed join instead of a scan of each host's snapshots.
--   repo_stats.last_check_ok_at: the last check that found no error; last_check_at alone forgets
--     it as soon as a check fails.
ALTER TABLE hosts ADD COLUMN time_zone text;
--> statement-breakpoint
ALTER TABLE source_groups ADD COLUMN grace_seconds integer
  CONSTRAINT source_groups_grace_seconds_check CHECK (grace_seconds > 0);
--> statement-breakpoint
CREATE TABLE snapshot_tags (
  host_id text NOT NULL REFERENCES hosts (id) ON DELETE CASCADE,
  tag text NOT NULL,
  latest_at timestamptz NOT NULL,
  snapshot_count integer NOT NULL CONSTRAINT snapshot_tags_snapshot_count_check CHECK (snapshot_count > 0),
  CONSTRAINT snapshot_tags_pkey PRIMARY KEY (host_id, tag)
);
--> statement-breakpoint
INSERT INTO snapshot_tags (host_id, tag, latest_at, snapshot_count)
  SELECT s.host_id, t.tag, max(s.time), count(*)::int
  FROM snapshots s CROSS JOIN LATERAL jsonb_array_elements_text(s.tags) AS t(tag)
  GROUP BY s.host_id, t.tag;
--> statement-breakpoint
ALTER TABLE repo_stats ADD COLUMN last_check_ok_at timestamptz;
--> statement-breakpoint
UPDATE repo_stats SET last_check_ok_at = last_check_at WHERE last_check_status = 'ok';
