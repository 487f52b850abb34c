-- The scheduled_at of the last schedule.fire acted on, so a repeated fire of the same (or an
-- earlier) slot dispatches nothing.
ALTER TABLE schedules ADD COLUMN last_fired_at timestamptz;
