-- Scale-out (issue 15): several server replicas on one PostgreSQL. Each replica heartbeats a row
-- here; a host's live socket is recorded against the replica that holds it (one row per host,
-- last connection wins), so every replica knows which hosts are online fleet-wide and where to
-- route a message. A replica that stops heartbeating is dead: its rows expire with it (the
-- cascade). Messages over NOTIFY's 8,000-byte limit wait in cluster_messages and the NOTIFY
-- carries the row's id. Sign-in and announce rate limits count in rate_limits, so an attacker
-- spreading attempts over the replicas meets one limit, not one per replica (keys are SHA-256
-- hashes: a username field can hold a mistyped password). New tables only: transactional, and migrations run under an advisory lock.
CREATE TABLE server_replicas (
  id text PRIMARY KEY,
  started_at timestamptz NOT NULL DEFAULT now(),
  heartbeat_at timestamptz NOT NULL DEFAULT now()
);
--> statement-breakpoint
CREATE TABLE host_connections (
  host_id text PRIMARY KEY REFERENCES hosts (id) ON DELETE CASCADE,
  replica_id text NOT NULL REFERENCES server_replicas (id) ON DELETE CASCADE,
  connection_id text NOT NULL,
  connected_at timestamptz NOT NULL DEFAULT now()
);
--> statement-breakpoint
CREATE INDEX host_connections_replica_id_idx ON host_connections (replica_id);
--> statement-breakpoint
CREATE TABLE cluster_messages (
  id text PRIMARY KEY,
  payload text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
--> statement-breakpoint
CREATE INDEX cluster_messages_created_at_idx ON cluster_messages (created_at);
--> statement-breakpoint
CREATE TABLE rate_limits (
  scope text NOT NULL,
  key_hash text NOT NULL,
  window_start timestamptz NOT NULL,
  count integer NOT NULL CONSTRAINT rate_limits_count_check CHECK (count >= 0),
  PRIMARY KEY (scope, key_hash)
);
