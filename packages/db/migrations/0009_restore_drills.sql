-- Restore drills (issue 16): a job kind 'drill' that restores a random sample of the newest
-- snapshot's files into a scratch directory on the host and verifies them, and its cadence on the
-- per-host maintenance record. Off by default: a drill downloads data from the repository, which
-- an operator with a metered link should choose to pay for.
--   drill_sample_files: files per drill; the bound is DRILL_MAX_SAMPLE_FILES of the wire contract,
--     since the sample travels as restic arguments.
--   last_drill_slot_at: the due slot last dispatched, as for the other cadences.
ALTER TABLE jobs DROP CONSTRAINT jobs_kind_check;
--> statement-breakpoint
ALTER TABLE jobs ADD CONSTRAINT jobs_kind_check
  CHECK (kind IN ('backup', 'forget', 'prune', 'check', 'unlock', 'init', 'restore', 'diff', 'drill'));
--> statement-breakpoint
ALTER TABLE maintenance ADD COLUMN drill_cron text NOT NULL DEFAULT '0 6 * * 3';
--> statement-breakpoint
ALTER TABLE maintenance ADD COLUMN drill_enabled boolean NOT NULL DEFAULT false;
--> statement-breakpoint
ALTER TABLE maintenance ADD COLUMN drill_sample_files integer NOT NULL DEFAULT 20
  CONSTRAINT maintenance_drill_sample_files_check CHECK (drill_sample_files BETWEEN 1 AND 100);
--> statement-breakpoint
ALTER TABLE maintenance ADD COLUMN last_drill_slot_at timestamptz;
