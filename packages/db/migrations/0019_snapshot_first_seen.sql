-- When the server first stored each snapshot (issue 33): retention decided by the server trusts a
-- snapshot's claimed time only when it is close to this, so a host that back-dates a backup
-- (restic backup --time) or dates one in the future cannot steer which snapshots a policy keeps.
-- Rows stored before this migration have none (null: trusted, as they were); every row inserted
-- from now on gets the database's clock, never a time the agent sent.
ALTER TABLE snapshots ADD COLUMN first_seen_at timestamptz;
--> statement-breakpoint
ALTER TABLE snapshots ALTER COLUMN first_seen_at SET DEFAULT now();
