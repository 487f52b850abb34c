-- Fleetback initial schema. Never edit once released: add 0002_... instead.
-- Statements are separated by the breakpoint marker so each runs as its own query on every engine.

CREATE TABLE users (
  id text PRIMARY KEY,
  username text NOT NULL,
  password_hash text NOT NULL,
  role text NOT NULL CONSTRAINT users_role_check CHECK (role IN ('admin', 'operator', 'viewer')),
  created_at timestamptz NOT NULL DEFAULT now(),
  disabled_at timestamptz
);
--> statement-breakpoint
CREATE UNIQUE INDEX users_username_lower_key ON users (lower(username));
--> statement-breakpoint
CREATE TABLE sessions (
  id text PRIMARY KEY,
  token_hash text NOT NULL CONSTRAINT sessions_token_hash_key UNIQUE,
  user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  csrf_token text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  ip text,
  user_agent text
);
--> statement-breakpoint
CREATE INDEX sessions_user_id_idx ON sessions (user_id);
--> statement-breakpoint
CREATE INDEX sessions_expires_at_idx ON sessions (expires_at);
--> statement-breakpoint
CREATE TABLE api_tokens (
  id text PRIMARY KEY,
  user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  name text NOT NULL,
  token_hash text NOT NULL CONSTRAINT api_tokens_token_hash_key UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);
--> statement-breakpoint
CREATE INDEX api_tokens_user_id_idx ON api_tokens (user_id);
--> statement-breakpoint
CREATE TABLE hosts (
  id text PRIMARY KEY,
  name text NOT NULL,
  os text NOT NULL,
  arch text NOT NULL,
  agent_version text NOT NULL,
  tool_version text NOT NULL DEFAULT '',
  protocol_version integer,
  status text NOT NULL DEFAULT 'offline' CONSTRAINT hosts_status_check CHECK (status IN ('online', 'offline')),
  last_seen_at timestamptz,
  snapshot_count integer NOT NULL DEFAULT 0 CONSTRAINT hosts_snapshot_count_check CHECK (snapshot_count >= 0),
  snapshots_refreshed_at timestamptz,
  bandwidth_up_kbps integer CONSTRAINT hosts_bandwidth_up_kbps_check CHECK (bandwidth_up_kbps > 0),
  bandwidth_down_kbps integer CONSTRAINT hosts_bandwidth_down_kbps_check CHECK (bandwidth_down_kbps > 0),
  pre_hook_default bytea,
  post_hook_default bytea,
  schedule_version integer NOT NULL DEFAULT 0,
  schedule_acked_version integer NOT NULL DEFAULT 0,
  agent_token_hash text CONSTRAINT hosts_agent_token_hash_key UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
--> statement-breakpoint
CREATE INDEX hosts_name_idx ON hosts (name);
--> statement-breakpoint
CREATE TABLE host_credentials (
  host_id text PRIMARY KEY REFERENCES hosts (id) ON DELETE CASCADE,
  repo_sealed bytea,
  admin_sealed bytea,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
--> statement-breakpoint
CREATE TABLE enrolment_tokens (
  id text PRIMARY KEY,
  token_hash text NOT NULL CONSTRAINT enrolment_tokens_token_hash_key UNIQUE,
  sealed_repository bytea,
  initial_paths jsonb NOT NULL DEFAULT '[]'::jsonb,
  created_by text REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  consumed_at timestamptz,
  consumed_by_host_id text REFERENCES hosts (id) ON DELETE SET NULL
);
--> statement-breakpoint
CREATE TABLE pending_hosts (
  id text PRIMARY KEY,
  hostname text NOT NULL,
  os text NOT NULL,
  arch text NOT NULL,
  agent_version text NOT NULL,
  tool_version text NOT NULL DEFAULT '',
  public_key bytea NOT NULL CONSTRAINT pending_hosts_public_key_check CHECK (octet_length(public_key) = 32),
  fingerprint text NOT NULL,
  source_ip text,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  approved_at timestamptz,
  approved_by text REFERENCES users (id) ON DELETE SET NULL,
  host_id text REFERENCES hosts (id) ON DELETE SET NULL,
  sealed_agent_token bytea,
  claimed_at timestamptz
);
--> statement-breakpoint
CREATE INDEX pending_hosts_expires_at_idx ON pending_hosts (expires_at);
--> statement-breakpoint
CREATE TABLE source_groups (
  id text PRIMARY KEY,
  host_id text NOT NULL REFERENCES hosts (id) ON DELETE CASCADE,
  name text NOT NULL,
  includes jsonb NOT NULL DEFAULT '[]'::jsonb,
  excludes jsonb NOT NULL DEFAULT '[]'::jsonb,
  retention_policy jsonb NOT NULL DEFAULT '{}'::jsonb,
  retry_max integer NOT NULL DEFAULT 3 CONSTRAINT source_groups_retry_max_check CHECK (retry_max >= 0),
  retry_backoff_seconds integer NOT NULL DEFAULT 300
    CONSTRAINT source_groups_retry_backoff_seconds_check CHECK (retry_backoff_seconds >= 0),
  conflict_dimension text,
  pre_hook bytea,
  post_hook bytea,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT source_groups_host_id_name_key UNIQUE (host_id, name)
);
--> statement-breakpoint
CREATE TABLE schedules (
  id text PRIMARY KEY,
  host_id text NOT NULL REFERENCES hosts (id) ON DELETE CASCADE,
  cron text NOT NULL,
  enabled boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
--> statement-breakpoint
CREATE INDEX schedules_host_id_idx ON schedules (host_id);
--> statement-breakpoint
-- A group a schedule still fires cannot be deleted. The check is deferred to commit because a
-- host deletion cascades to groups and to membership rows in no promised order.
CREATE TABLE schedule_source_groups (
  schedule_id text NOT NULL REFERENCES schedules (id) ON DELETE CASCADE,
  source_group_id text NOT NULL REFERENCES source_groups (id) ON DELETE NO ACTION
    DEFERRABLE INITIALLY DEFERRED,
  CONSTRAINT schedule_source_groups_pkey PRIMARY KEY (schedule_id, source_group_id)
);
--> statement-breakpoint
CREATE INDEX schedule_source_groups_source_group_id_idx ON schedule_source_groups (source_group_id);
--> statement-breakpoint
CREATE TABLE maintenance (
  host_id text PRIMARY KEY REFERENCES hosts (id) ON DELETE CASCADE,
  forget_cron text NOT NULL DEFAULT '0 3 * * *',
  forget_enabled boolean NOT NULL DEFAULT true,
  prune_cron text NOT NULL DEFAULT '0 4 * * 0',
  prune_enabled boolean NOT NULL DEFAULT true,
  check_cron text NOT NULL DEFAULT '0 5 1 * *',
  check_enabled boolean NOT NULL DEFAULT true,
  check_read_data_subset text NOT NULL DEFAULT '5%',
  last_forget_slot_at timestamptz,
  last_prune_slot_at timestamptz,
  last_check_slot_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
--> statement-breakpoint
CREATE TABLE jobs (
  id text PRIMARY KEY,
  host_id text NOT NULL REFERENCES hosts (id) ON DELETE CASCADE,
  kind text NOT NULL CONSTRAINT jobs_kind_check
    CHECK (kind IN ('backup', 'forget', 'prune', 'check', 'unlock', 'init', 'restore', 'diff')),
  status text NOT NULL DEFAULT 'queued' CONSTRAINT jobs_status_check
    CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'cancelled', 'lost')),
  actor_kind text NOT NULL CONSTRAINT jobs_actor_kind_check CHECK (actor_kind IN ('user', 'schedule', 'system')),
  actor_user_id text REFERENCES users (id) ON DELETE SET NULL,
  -- Set at insert for schedule-fired jobs, cleared when the schedule is deleted: no CHECK on it.
  scheduled_id text REFERENCES schedules (id) ON DELETE SET NULL,
  source_group_id text REFERENCES source_groups (id) ON DELETE SET NULL,
  params jsonb NOT NULL DEFAULT '{}'::jsonb,
  progress jsonb,
  summary jsonb,
  exit_code integer,
  error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  started_at timestamptz,
  finished_at timestamptz
);
--> statement-breakpoint
CREATE INDEX jobs_host_id_created_at_idx ON jobs (host_id, created_at DESC);
--> statement-breakpoint
CREATE INDEX jobs_active_status_idx ON jobs (status) WHERE status IN ('queued', 'running');
--> statement-breakpoint
CREATE INDEX jobs_host_id_kind_idx ON jobs (host_id, kind);
--> statement-breakpoint
CREATE INDEX jobs_source_group_id_idx ON jobs (source_group_id);
--> statement-breakpoint
CREATE INDEX jobs_scheduled_id_idx ON jobs (scheduled_id);
--> statement-breakpoint
CREATE TABLE job_logs (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  job_id text NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
  seq integer NOT NULL,
  stream text NOT NULL CONSTRAINT job_logs_stream_check CHECK (stream IN ('stdout', 'stderr', 'agent')),
  line text NOT NULL,
  ts timestamptz NOT NULL
);
--> statement-breakpoint
CREATE INDEX job_logs_job_id_seq_idx ON job_logs (job_id, seq);
--> statement-breakpoint
CREATE TABLE pending_runs (
  id text PRIMARY KEY,
  host_id text NOT NULL REFERENCES hosts (id) ON DELETE CASCADE,
  source_group_id text NOT NULL REFERENCES source_groups (id) ON DELETE CASCADE,
  schedule_id text REFERENCES schedules (id) ON DELETE SET NULL,
  actor_kind text NOT NULL CONSTRAINT pending_runs_actor_kind_check
    CHECK (actor_kind IN ('user', 'schedule', 'system')),
  actor_user_id text REFERENCES users (id) ON DELETE SET NULL,
  attempt integer NOT NULL DEFAULT 0 CONSTRAINT pending_runs_attempt_check CHECK (attempt >= 0),
  next_attempt_at timestamptz NOT NULL,
  last_job_id text REFERENCES jobs (id) ON DELETE SET NULL,
  reason text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
--> statement-breakpoint
CREATE INDEX pending_runs_next_attempt_at_idx ON pending_runs (next_attempt_at);
--> statement-breakpoint
CREATE INDEX pending_runs_host_id_idx ON pending_runs (host_id);
--> statement-breakpoint
CREATE TABLE snapshots (
  host_id text NOT NULL REFERENCES hosts (id) ON DELETE CASCADE,
  id text NOT NULL,
  short_id text NOT NULL,
  time timestamptz NOT NULL,
  hostname text NOT NULL,
  paths jsonb NOT NULL DEFAULT '[]'::jsonb,
  tags jsonb NOT NULL DEFAULT '[]'::jsonb,
  size_bytes bigint NOT NULL DEFAULT 0,
  file_count bigint NOT NULL DEFAULT 0,
  CONSTRAINT snapshots_pkey PRIMARY KEY (host_id, id)
);
--> statement-breakpoint
CREATE INDEX snapshots_host_id_time_idx ON snapshots (host_id, time DESC);
--> statement-breakpoint
CREATE TABLE repo_stats (
  host_id text PRIMARY KEY REFERENCES hosts (id) ON DELETE CASCADE,
  last_check_status text CONSTRAINT repo_stats_last_check_status_check
    CHECK (last_check_status IN ('ok', 'errors', 'failed')),
  last_check_at timestamptz,
  total_size_bytes bigint,
  raw_size_bytes bigint,
  total_file_count bigint,
  snapshot_count integer,
  compression_ratio double precision,
  last_prune_at timestamptz,
  last_forget_at timestamptz,
  updated_at timestamptz NOT NULL DEFAULT now()
);
--> statement-breakpoint
CREATE TABLE alerts (
  id text PRIMARY KEY,
  host_id text NOT NULL REFERENCES hosts (id) ON DELETE CASCADE,
  kind text NOT NULL,
  dedup_key text NOT NULL DEFAULT '',
  message text NOT NULL,
  last_job_id text REFERENCES jobs (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now(),
  resolved_at timestamptz,
  resolved_by text REFERENCES users (id) ON DELETE SET NULL
);
--> statement-breakpoint
-- SPEC: at most one open alert per (host_id, kind, dedup_key).
CREATE UNIQUE INDEX alerts_open_key ON alerts (host_id, kind, dedup_key) WHERE resolved_at IS NULL;
--> statement-breakpoint
CREATE INDEX alerts_created_at_idx ON alerts (created_at);
--> statement-breakpoint
CREATE TABLE notification_channels (
  id text PRIMARY KEY,
  name text NOT NULL CONSTRAINT notification_channels_name_key UNIQUE,
  kind text NOT NULL CONSTRAINT notification_channels_kind_check
    CHECK (kind IN ('webhook', 'slack', 'discord', 'ntfy', 'gotify', 'email')),
  sealed_config bytea NOT NULL,
  enabled boolean NOT NULL DEFAULT true,
  notify_resolved boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
--> statement-breakpoint
CREATE TABLE notification_log (
  id text PRIMARY KEY,
  channel_id text NOT NULL REFERENCES notification_channels (id) ON DELETE CASCADE,
  alert_id text REFERENCES alerts (id) ON DELETE SET NULL,
  event text NOT NULL,
  attempt integer NOT NULL DEFAULT 1,
  status text NOT NULL CONSTRAINT notification_log_status_check CHECK (status IN ('sent', 'failed', 'retrying')),
  status_code integer,
  error text,
  created_at timestamptz NOT NULL DEFAULT now()
);
--> statement-breakpoint
CREATE INDEX notification_log_channel_id_created_at_idx ON notification_log (channel_id, created_at DESC);
--> statement-breakpoint
CREATE INDEX notification_log_alert_id_idx ON notification_log (alert_id);
--> statement-breakpoint
CREATE TABLE audit_log (
  id text PRIMARY KEY,
  at timestamptz NOT NULL DEFAULT now(),
  actor_kind text NOT NULL CONSTRAINT audit_log_actor_kind_check CHECK (actor_kind IN ('user', 'system', 'agent')),
  actor_user_id text REFERENCES users (id) ON DELETE SET NULL,
  action text NOT NULL,
  target_kind text,
  target_id text,
  details jsonb NOT NULL DEFAULT '{}'::jsonb,
  ip text
);
--> statement-breakpoint
CREATE INDEX audit_log_at_idx ON audit_log (at DESC);
--> statement-breakpoint
CREATE INDEX audit_log_target_idx ON audit_log (target_kind, target_id);
