-- A mirror repository per host (issue 18, 3-2-1): a `copy` job kind that copies the host's
-- snapshots to it, and its credentials sealed beside the others (host id as additional data).
-- What the mirror holds is read from the newest copy job's summary, so no second record can
-- disagree with it.
ALTER TABLE jobs DROP CONSTRAINT jobs_kind_check;
--> statement-breakpoint
ALTER TABLE jobs ADD CONSTRAINT jobs_kind_check
  CHECK (kind IN ('backup', 'forget', 'prune', 'check', 'unlock', 'init', 'restore', 'diff', 'drill', 'copy'));
--> statement-breakpoint
ALTER TABLE host_credentials ADD COLUMN mirror_sealed bytea;
