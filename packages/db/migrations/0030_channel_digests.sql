-- Issue 39.1: a daily or weekly digest of the whole fleet per notification channel, at a local
-- time. channel_digests keeps the last slot taken (a second server or a restart never sends it
-- twice), what that digest saw (the next says what changed) and when one was last delivered.
ALTER TABLE notification_channels
  ADD COLUMN digest_period text,
  ADD COLUMN digest_time text,
  ADD COLUMN digest_weekday smallint,
  ADD CONSTRAINT notification_channels_digest_check CHECK (
    (digest_period IS NULL AND digest_time IS NULL AND digest_weekday IS NULL)
    OR (digest_period = 'daily' AND digest_time ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$' AND digest_weekday IS NULL)
    OR (digest_period = 'weekly' AND digest_time ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$' AND digest_weekday BETWEEN 0 AND 6)
  );
--> statement-breakpoint
CREATE TABLE channel_digests (
  channel_id text PRIMARY KEY REFERENCES notification_channels (id) ON DELETE CASCADE,
  slot_at timestamptz NOT NULL,
  state jsonb,
  queued_at timestamptz,
  sent_at timestamptz
);
--> statement-breakpoint
ALTER TABLE notification_deliveries DROP CONSTRAINT notification_deliveries_event_check;
--> statement-breakpoint
ALTER TABLE notification_deliveries ADD CONSTRAINT notification_deliveries_event_check
  CHECK (event IN ('alert.opened', 'alert.resolved', 'digest'));
