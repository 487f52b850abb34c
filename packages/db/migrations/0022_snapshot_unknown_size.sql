-- A snapshot's size and file count as restic reported them, or null where it does not (issue 35):
-- restic before 0.17 keeps no summary in a snapshot, and 0 read as "empty" where it meant
-- "unknown". Rows stored so far with both 0 are such snapshots (a real backup reads at least its
-- own directory), so they become unknown too; snapshots are never re-stored once known.
ALTER TABLE snapshots ALTER COLUMN size_bytes DROP NOT NULL;
--> statement-breakpoint
ALTER TABLE snapshots ALTER COLUMN size_bytes DROP DEFAULT;
--> statement-breakpoint
ALTER TABLE snapshots ALTER COLUMN file_count DROP NOT NULL;
--> statement-breakpoint
ALTER TABLE snapshots ALTER COLUMN file_count DROP DEFAULT;
--> statement-breakpoint
UPDATE snapshots SET size_bytes = NULL, file_count = NULL WHERE size_bytes = 0 AND file_count = 0;
