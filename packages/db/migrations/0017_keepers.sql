-- Keepers (issue 33): an enrolled agent that maintains other hosts' repositories. A host whose
-- keeper_host_id is set is protected: it never receives its repository's delete-capable
-- (admin) credential nor the mirror's; forget, prune, unlock, check and mirror copies of its
-- repository run on the keeper with credentials pushed for each job alone.
--   hosts.keeper_host_id: the keeper; deleting a keeper that still keeps a host is refused (the
--     host would silently lose its protection), hence no ON DELETE action.
--   jobs.runner_host_id: the host whose agent runs the job when it is not the job's own host (a
--     kept job); its reports are accepted from that agent only. Null: the job's host runs it.
ALTER TABLE hosts ADD COLUMN keeper_host_id text REFERENCES hosts (id);
--> statement-breakpoint
ALTER TABLE hosts ADD CONSTRAINT hosts_keeper_not_self_check CHECK (keeper_host_id <> id);
--> statement-breakpoint
CREATE INDEX hosts_keeper_host_id_idx ON hosts (keeper_host_id) WHERE keeper_host_id IS NOT NULL;
--> statement-breakpoint
ALTER TABLE jobs ADD COLUMN runner_host_id text REFERENCES hosts (id) ON DELETE SET NULL;
--> statement-breakpoint
CREATE INDEX jobs_runner_host_id_idx ON jobs (runner_host_id) WHERE runner_host_id IS NOT NULL;
