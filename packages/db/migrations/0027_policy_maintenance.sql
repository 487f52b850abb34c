-- Issue 37.2: policies give hosts their maintenance and drill cadences too. Which fields of a
-- host's maintenance record a policy set (field to "policy id:version"), so that what a policy
-- gave can be shown and taken back; and the fields the host set itself over a policy's.
ALTER TABLE maintenance ADD COLUMN policy_fields jsonb NOT NULL DEFAULT '{}'::jsonb;
--> statement-breakpoint
ALTER TABLE maintenance ADD COLUMN overrides jsonb NOT NULL DEFAULT '{}'::jsonb;
