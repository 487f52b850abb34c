-- Durable notification delivery: each alert notification waits here, one row per channel, until
-- it is sent or given up, so a restart or crash no longer drops pending retries. A server claims
-- due rows for a lease (claimed_until) with FOR UPDATE SKIP LOCKED, so servers sharing the
-- database never send the same attempt twice. Only a new table and its indexes: transactional,
-- and the runner's advisory lock serialises two servers starting together.
CREATE TABLE notification_deliveries (
  id text PRIMARY KEY,
  channel_id text NOT NULL REFERENCES notification_channels (id) ON DELETE CASCADE,
  alert_id text REFERENCES alerts (id) ON DELETE SET NULL,
  event text NOT NULL
    CONSTRAINT notification_deliveries_event_check CHECK (event IN ('alert.opened', 'alert.resolved')),
  notification jsonb NOT NULL,
  attempts integer NOT NULL DEFAULT 0 CONSTRAINT notification_deliveries_attempts_check CHECK (attempts >= 0),
  next_attempt_at timestamptz NOT NULL,
  claimed_until timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
--> statement-breakpoint
CREATE INDEX notification_deliveries_next_attempt_at_idx ON notification_deliveries (next_attempt_at);
--> statement-breakpoint
CREATE INDEX notification_deliveries_channel_id_idx ON notification_deliveries (channel_id);
