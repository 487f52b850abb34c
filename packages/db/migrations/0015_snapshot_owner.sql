-- Snapshot ownership (issue 31): a repository can hold other machines' snapshots (shared by
-- several machines, or made by hand before Fleetback). A host's own snapshots are those made
-- under one of its snapshot hostnames: restic_host, the stable name its backups are made under
-- (`--host`, unique in the fleet so two hosts sharing a repository never mix), and the hostnames
-- its agent reported before (a machine's history from before Fleetback or before a rename).
-- snapshots.is_own is decided when a snapshot row is written and again when the names change;
-- retention, freshness, counts and mirror copies only look at own snapshots.
ALTER TABLE hosts ADD COLUMN restic_host text;
--> statement-breakpoint
UPDATE hosts h SET restic_host = CASE WHEN d.n = 1 THEN h.name ELSE left(h.name, 246) || '-' || lower(right(h.id, 6)) END
FROM (SELECT id, row_number() OVER (PARTITION BY name ORDER BY id) AS n FROM hosts) d
WHERE d.id = h.id;
--> statement-breakpoint
ALTER TABLE hosts ALTER COLUMN restic_host SET NOT NULL;
--> statement-breakpoint
ALTER TABLE hosts ADD CONSTRAINT hosts_restic_host_key UNIQUE (restic_host);
--> statement-breakpoint
ALTER TABLE hosts ADD COLUMN snapshot_hostnames jsonb NOT NULL DEFAULT '[]'::jsonb;
--> statement-breakpoint
UPDATE hosts SET snapshot_hostnames = (
  SELECT jsonb_agg(DISTINCT n) FROM unnest(ARRAY[restic_host, reported_hostname, name]) AS n WHERE n IS NOT NULL
);
--> statement-breakpoint
ALTER TABLE hosts ADD COLUMN other_snapshot_count integer NOT NULL DEFAULT 0;
--> statement-breakpoint
ALTER TABLE hosts ADD CONSTRAINT hosts_other_snapshot_count_check CHECK (other_snapshot_count >= 0);
--> statement-breakpoint
ALTER TABLE snapshots ADD COLUMN is_own boolean NOT NULL DEFAULT true;
--> statement-breakpoint
UPDATE snapshots s SET is_own = false FROM hosts h
WHERE h.id = s.host_id AND NOT jsonb_exists(h.snapshot_hostnames, s.hostname);
--> statement-breakpoint
UPDATE hosts h SET
  snapshot_count = (SELECT count(*) FROM snapshots s WHERE s.host_id = h.id AND s.is_own),
  other_snapshot_count = (SELECT count(*) FROM snapshots s WHERE s.host_id = h.id AND NOT s.is_own);
--> statement-breakpoint
DELETE FROM snapshot_tags t WHERE NOT EXISTS (
  SELECT 1 FROM snapshots s WHERE s.host_id = t.host_id AND s.is_own AND s.tags ? t.tag
);
--> statement-breakpoint
UPDATE snapshot_tags t SET latest_at = o.latest_at, snapshot_count = o.snapshot_count
FROM (
  SELECT s.host_id, tag, max(s.time) AS latest_at, count(*)::int AS snapshot_count
  FROM snapshots s CROSS JOIN LATERAL jsonb_array_elements_text(s.tags) AS tag
  WHERE s.is_own
  GROUP BY s.host_id, tag
) o
WHERE o.host_id = t.host_id AND o.tag = t.tag;
