-- A host's repository that does not answer (issue 31): a backup against a stopped rest-server
-- looked running for 15-21 minutes and failed without any alert. The agent now fails such a job
-- within a minute or two with job.finished.repository_unreachable (protocol 11); the server keeps
-- the outage here, at most one per host, until a job of the host reaches the repository again
-- (then the row is deleted: the alert keeps the history). A new table rather than columns on
-- hosts: written only when a repository comes and goes, never on the hot hosts row.
--   since: when the first failing job of this outage ended.
--   last_failed_at, last_error, last_job_id: the latest failing job.
--   failed_jobs: how many jobs failed for it so far.
CREATE TABLE repository_outages (
  host_id text PRIMARY KEY REFERENCES hosts (id) ON DELETE CASCADE,
  since timestamptz NOT NULL,
  last_failed_at timestamptz NOT NULL,
  last_error text NOT NULL,
  last_job_id text REFERENCES jobs (id) ON DELETE SET NULL,
  failed_jobs integer NOT NULL DEFAULT 1,
  CONSTRAINT repository_outages_failed_jobs_check CHECK (failed_jobs > 0)
);
