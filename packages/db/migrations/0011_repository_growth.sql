-- Repository growth (issue 16): repo_stats keeps only a host's latest size, so the fleet's size
-- over time needs its own history. One row per host and UTC day, overwritten by each repo.stats
-- of that day that carries a size, so the table grows by at most one row per host a day.
-- Snapshot sizes cannot stand in for it: a snapshot's size_bytes is the data it read
-- (total_bytes_processed), not what it added to the deduplicated repository.
--   raw_size_bytes: what the repository stores (restic stats raw-data total_size).
--   total_size_bytes: the same blobs uncompressed (restic 0.15 and later; null for 0.14).
CREATE TABLE repository_sizes (
  host_id text NOT NULL REFERENCES hosts (id) ON DELETE CASCADE,
  day date NOT NULL,
  raw_size_bytes bigint,
  total_size_bytes bigint,
  recorded_at timestamptz NOT NULL,
  CONSTRAINT repository_sizes_pkey PRIMARY KEY (host_id, day)
);
--> statement-breakpoint
-- The fleet chart reads a window of days across every host.
CREATE INDEX repository_sizes_day_idx ON repository_sizes (day);
--> statement-breakpoint
-- The sizes known before this migration become each host's first point, on the day they were
-- reported.
INSERT INTO repository_sizes (host_id, day, raw_size_bytes, total_size_bytes, recorded_at)
  SELECT host_id, (updated_at AT TIME ZONE 'UTC')::date, raw_size_bytes, total_size_bytes, updated_at
  FROM repo_stats
  WHERE raw_size_bytes IS NOT NULL OR total_size_bytes IS NOT NULL;
