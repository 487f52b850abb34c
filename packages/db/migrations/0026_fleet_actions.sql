-- Issue 37.5: acting on many hosts at once. A host's schedules can be paused as a whole (every
-- schedule goes to its agent disabled, whatever its own setting or its policy's, and comes back
-- as it was on resume). An agent rollout can go in rings by selector, each ring waiting for the
-- one before to report and the rollout halting where a ring's failures pass its threshold.
ALTER TABLE hosts ADD COLUMN schedules_paused boolean NOT NULL DEFAULT false;
--> statement-breakpoint
CREATE TABLE agent_rollouts (
  id text PRIMARY KEY,
  version text NOT NULL,
  state text NOT NULL CONSTRAINT agent_rollouts_state_check CHECK (state IN ('running', 'halted', 'completed')),
  rings jsonb NOT NULL CONSTRAINT agent_rollouts_rings_array_check CHECK (jsonb_typeof(rings) = 'array'),
  ring integer NOT NULL DEFAULT 0,
  ring_hosts jsonb NOT NULL DEFAULT '[]'::jsonb CONSTRAINT agent_rollouts_ring_hosts_array_check CHECK (jsonb_typeof(ring_hosts) = 'array'),
  halted_reason text,
  actor_user_id text REFERENCES users(id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
--> statement-breakpoint
CREATE INDEX agent_rollouts_running_idx ON agent_rollouts (state) WHERE state = 'running';
