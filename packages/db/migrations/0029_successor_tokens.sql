-- Issue 38.2: an enrolment token that makes the machine enrolling with it the successor of a
-- host (a replacement for a dead one): it takes over that host's row, so its name, labels, groups,
-- schedules, repository and snapshot history, and the old agent's token stops working. Deleting
-- the host deletes its unused successor tokens: one could not enrol a stranger in its place.
ALTER TABLE enrolment_tokens ADD COLUMN successor_of text REFERENCES hosts (id) ON DELETE CASCADE;
