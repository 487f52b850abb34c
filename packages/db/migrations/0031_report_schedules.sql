-- Issue 39.3: the evidence report for the last week or month, mailed on a schedule through an
-- email channel's SMTP settings to a list of addresses of its own, with the CSV attached.
CREATE TABLE report_schedules (
  id text PRIMARY KEY,
  name text NOT NULL,
  channel_id text NOT NULL REFERENCES notification_channels (id) ON DELETE CASCADE,
  recipients jsonb NOT NULL,
  period text NOT NULL,
  time text NOT NULL,
  weekday smallint,
  selector text NOT NULL DEFAULT '',
  groups text NOT NULL DEFAULT '',
  enabled boolean NOT NULL DEFAULT true,
  slot_at timestamptz NOT NULL,
  queued_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT report_schedules_name_key UNIQUE (name),
  CONSTRAINT report_schedules_when_check CHECK (
    time ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'
    AND ((period = 'weekly' AND weekday BETWEEN 0 AND 6) OR (period = 'monthly' AND weekday IS NULL))
  )
);
--> statement-breakpoint
CREATE INDEX report_schedules_channel_id_idx ON report_schedules (channel_id);
--> statement-breakpoint
ALTER TABLE notification_deliveries DROP CONSTRAINT notification_deliveries_event_check;
--> statement-breakpoint
ALTER TABLE notification_deliveries ADD CONSTRAINT notification_deliveries_event_check
  CHECK (event IN ('alert.opened', 'alert.resolved', 'digest', 'report'));
