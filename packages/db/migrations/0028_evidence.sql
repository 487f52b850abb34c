-- Evidence for an audit (issue 39.2): per host and UTC day, what the server saw happen: snapshots
-- of each group (by its tag) as they were first listed, and the checks and drills that ended.
-- Recorded when seen and never rewritten from later lists, so forgetting snapshots or deleting a
-- host does not change what a report says of the past: no foreign key to hosts on purpose.
-- Kept for EVIDENCE_KEEP_DAYS (packages/server/src/evidence/evidence-record.ts), then pruned.
CREATE TABLE evidence_hosts (
  host_id text PRIMARY KEY,
  name text NOT NULL,
  -- The host's labels when last recorded: a report's selector still finds a deleted host.
  labels jsonb NOT NULL DEFAULT '{}'::jsonb,
  first_day date NOT NULL,
  updated_at timestamptz NOT NULL
);
--> statement-breakpoint
CREATE TABLE evidence_days (
  host_id text NOT NULL,
  day date NOT NULL,
  kind text NOT NULL,
  -- The group's tag for a snapshot; empty for a check or a drill.
  subject text NOT NULL DEFAULT '',
  runs integer NOT NULL,
  passed integer NOT NULL,
  last_at timestamptz NOT NULL,
  last_passed boolean NOT NULL,
  CONSTRAINT evidence_days_pkey PRIMARY KEY (host_id, day, kind, subject),
  CONSTRAINT evidence_days_kind_check CHECK (kind IN ('snapshot', 'check', 'drill')),
  CONSTRAINT evidence_days_counts_check CHECK (runs > 0 AND passed >= 0 AND passed <= runs)
);
--> statement-breakpoint
-- Pruning and a report's range read by day.
CREATE INDEX evidence_days_day_idx ON evidence_days (day);
