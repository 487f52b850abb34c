-- Deletion holds (issue 33): while a host has an open hold, no forget or prune of its repository
-- (nor of its mirror) is dispatched, by schedule, by an operator or by the mirror's upkeep. Two
-- kinds open one:
--   backup_anomaly: a backup far outside its group's baseline (most files rewritten, bytes added
--     many times the usual, the source shrinking by half): what ransomware looks like.
--   large_forget: a forget planned by the server that would remove more than the set share of a
--     group's snapshots; releasing it runs exactly the held plan.
-- Only an admin releases a hold, with a reason (audited); at most one open hold per host and kind.
CREATE TABLE deletion_holds (
  id text PRIMARY KEY,
  host_id text NOT NULL REFERENCES hosts (id) ON DELETE CASCADE,
  kind text NOT NULL,
  reason text NOT NULL,
  details jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  released_at timestamptz,
  released_by text REFERENCES users (id) ON DELETE SET NULL,
  release_reason text,
  CONSTRAINT deletion_holds_kind_check CHECK (kind IN ('backup_anomaly', 'large_forget')),
  CONSTRAINT deletion_holds_release_check CHECK ((released_at IS NULL) = (release_reason IS NULL))
);
--> statement-breakpoint
CREATE UNIQUE INDEX deletion_holds_open_key ON deletion_holds (host_id, kind) WHERE released_at IS NULL;
