-- Issue 35.2: an enrolment token says which schedule and retention the host's first source group
-- (its initial paths) gets, so a new host is protected, not just listed. {"cron": "...",
-- "retention": {"daily": 7, ...}}; null: no schedule, an explicit choice at minting (and what
-- tokens minted before this column meant).
ALTER TABLE enrolment_tokens ADD COLUMN initial_schedule jsonb;
