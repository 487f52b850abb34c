-- Issue 38.3: the fleet's file catalogue that search reads. One lineage per host and source group
-- (snapshot tag), one row per distinct version of a path: a host's catalogue grows with its
-- distinct file versions, not with snapshots × files. Keys are 64-bit hashes computed by the
-- server (of host id and tag; of the directory path), so that a delta of thousands of paths needs
-- no round trip to learn generated ids, and the version rows stay narrow.
CREATE TABLE catalog_lineages (
  id bigint PRIMARY KEY,
  host_id text NOT NULL REFERENCES hosts (id) ON DELETE CASCADE,
  tag text NOT NULL,
  snapshot_id text,
  snapshot_at timestamptz,
  pending_snapshot_id text,
  pending_at timestamptz,
  pending_part integer,
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT catalog_lineages_host_id_tag_key UNIQUE (host_id, tag),
  CONSTRAINT catalog_lineages_pending_check CHECK (
    (pending_snapshot_id IS NULL) = (pending_at IS NULL) AND (pending_snapshot_id IS NULL) = (pending_part IS NULL)
  )
);
--> statement-breakpoint
CREATE TABLE catalog_dirs (
  lineage_id bigint NOT NULL REFERENCES catalog_lineages (id) ON DELETE CASCADE,
  id bigint NOT NULL,
  path text NOT NULL,
  CONSTRAINT catalog_dirs_pkey PRIMARY KEY (lineage_id, id)
);
--> statement-breakpoint
CREATE TABLE file_versions (
  lineage_id bigint NOT NULL REFERENCES catalog_lineages (id) ON DELETE CASCADE,
  dir_id bigint NOT NULL,
  name text NOT NULL,
  type text NOT NULL,
  size bigint NOT NULL,
  mtime timestamptz NOT NULL,
  from_at timestamptz NOT NULL,
  until_at timestamptz,
  CONSTRAINT file_versions_type_check CHECK (type IN ('dir', 'file', 'symlink', 'other')),
  CONSTRAINT file_versions_range_check CHECK (until_at IS NULL OR until_at >= from_at)
);
--> statement-breakpoint
CREATE INDEX file_versions_path_idx ON file_versions (lineage_id, dir_id, name, from_at);
--> statement-breakpoint
CREATE INDEX file_versions_name_idx ON file_versions (lineage_id, lower(name) text_pattern_ops);
--> statement-breakpoint
CREATE INDEX file_versions_name_reversed_idx ON file_versions (lineage_id, reverse(lower(name)) text_pattern_ops);
