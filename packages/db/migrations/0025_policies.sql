-- Issue 37.2/37.3: fleet policies. A policy holds source groups and schedules and the label
-- selector of the hosts it covers; every edit is a new immutable version (diff, rollback to any
-- version). What a policy gives a host is written into the host's own source_groups and schedules
-- rows, marked with the policy and its version, so the scheduler, dispatch and freshness read one
-- configuration whatever its origin; a host's own edit of a policy group is kept in `overrides`
-- and survives the next version.
CREATE TABLE policies (
  id text PRIMARY KEY,
  name text NOT NULL CONSTRAINT policies_name_key UNIQUE,
  version integer NOT NULL CONSTRAINT policies_version_check CHECK (version >= 1),
  selector text NOT NULL,
  priority integer NOT NULL CONSTRAINT policies_priority_check CHECK (priority BETWEEN 0 AND 1000),
  spec jsonb NOT NULL CONSTRAINT policies_spec_object_check CHECK (jsonb_typeof(spec) = 'object'),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
--> statement-breakpoint
CREATE TABLE policy_versions (
  policy_id text NOT NULL REFERENCES policies(id) ON DELETE CASCADE,
  version integer NOT NULL,
  name text NOT NULL,
  selector text NOT NULL,
  priority integer NOT NULL,
  spec jsonb NOT NULL,
  actor_user_id text REFERENCES users(id) ON DELETE SET NULL,
  note text,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT policy_versions_pkey PRIMARY KEY (policy_id, version)
);
--> statement-breakpoint
ALTER TABLE source_groups ADD COLUMN policy_id text REFERENCES policies(id) ON DELETE SET NULL;
--> statement-breakpoint
ALTER TABLE source_groups ADD COLUMN policy_version integer;
--> statement-breakpoint
ALTER TABLE source_groups ADD COLUMN overrides jsonb NOT NULL DEFAULT '{}'::jsonb;
--> statement-breakpoint
ALTER TABLE source_groups ADD CONSTRAINT source_groups_overrides_object_check CHECK (jsonb_typeof(overrides) = 'object');
--> statement-breakpoint
CREATE INDEX source_groups_policy_id_idx ON source_groups (policy_id) WHERE policy_id IS NOT NULL;
--> statement-breakpoint
ALTER TABLE schedules ADD COLUMN policy_id text REFERENCES policies(id) ON DELETE SET NULL;
--> statement-breakpoint
ALTER TABLE schedules ADD COLUMN policy_version integer;
--> statement-breakpoint
ALTER TABLE schedules ADD COLUMN policy_schedule text;
--> statement-breakpoint
CREATE INDEX schedules_policy_id_idx ON schedules (policy_id) WHERE policy_id IS NOT NULL;
