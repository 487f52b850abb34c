-- Agent self-update (issue 7). What the agent says it is (artefact kind), the rollout an operator
-- asked for and how far it got, and the last hello refused as too old (ErrProtocolTooOld), so the
-- host page can show the upgrade help URL. Only ADD COLUMN with constant or no defaults: cheap and
-- transactional, and the runner's advisory lock serialises two servers starting together.
ALTER TABLE hosts ADD COLUMN agent_kind text NOT NULL DEFAULT 'bundle'
  CONSTRAINT hosts_agent_kind_check CHECK (agent_kind IN ('bundle', 'sea'));
--> statement-breakpoint
ALTER TABLE hosts ADD COLUMN update_version text;
--> statement-breakpoint
ALTER TABLE hosts ADD COLUMN update_state text
  CONSTRAINT hosts_update_state_check
  CHECK (update_state IN ('pending', 'sent', 'restarting', 'succeeded', 'refused', 'rolled_back', 'failed'));
--> statement-breakpoint
ALTER TABLE hosts ADD COLUMN update_error text;
--> statement-breakpoint
ALTER TABLE hosts ADD COLUMN update_requested_at timestamptz;
--> statement-breakpoint
ALTER TABLE hosts ADD COLUMN update_state_at timestamptz;
--> statement-breakpoint
ALTER TABLE hosts ADD CONSTRAINT hosts_update_pair_check
  CHECK ((update_version IS NULL) = (update_state IS NULL));
--> statement-breakpoint
ALTER TABLE hosts ADD COLUMN refused_protocol_version integer;
--> statement-breakpoint
ALTER TABLE hosts ADD COLUMN refused_at timestamptz;
