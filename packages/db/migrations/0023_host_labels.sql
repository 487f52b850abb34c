-- Issue 37.1: hosts carry key=value labels, which label selectors (and fleet policies) match.
-- One jsonb object per host rather than a row per label: a selector is one predicate on the host
-- row (@> and ? use the GIN index), a host's labels come with the host, and a bulk change is one
-- UPDATE. Enrolment tokens carry the labels every host enrolled with them gets; an announced host
-- carries the ones its install asked for until it is approved. Always an object ('{}': none).
ALTER TABLE hosts ADD COLUMN labels jsonb NOT NULL DEFAULT '{}'::jsonb;
--> statement-breakpoint
ALTER TABLE hosts ADD CONSTRAINT hosts_labels_object_check CHECK (jsonb_typeof(labels) = 'object');
--> statement-breakpoint
CREATE INDEX hosts_labels_idx ON hosts USING gin (labels);
--> statement-breakpoint
ALTER TABLE enrolment_tokens ADD COLUMN labels jsonb NOT NULL DEFAULT '{}'::jsonb;
--> statement-breakpoint
ALTER TABLE enrolment_tokens ADD CONSTRAINT enrolment_tokens_labels_object_check CHECK (jsonb_typeof(labels) = 'object');
--> statement-breakpoint
ALTER TABLE pending_hosts ADD COLUMN labels jsonb NOT NULL DEFAULT '{}'::jsonb;
--> statement-breakpoint
ALTER TABLE pending_hosts ADD CONSTRAINT pending_hosts_labels_object_check CHECK (jsonb_typeof(labels) = 'object');
