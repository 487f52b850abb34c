-- Per-group and per-run bandwidth caps (issue 18), KiB/s like the host-wide caps; null = no cap of its own.
-- A backup of the group runs under the stricter of the group's and the host's cap.
ALTER TABLE source_groups
  ADD COLUMN bandwidth_up_kbps integer CONSTRAINT source_groups_bandwidth_up_kbps_check CHECK (bandwidth_up_kbps > 0);
--> statement-breakpoint
ALTER TABLE source_groups
  ADD COLUMN bandwidth_down_kbps integer CONSTRAINT source_groups_bandwidth_down_kbps_check CHECK (bandwidth_down_kbps > 0);
--> statement-breakpoint
-- A run-now's own caps ride along while the run waits for an offline host.
ALTER TABLE pending_runs
  ADD COLUMN bandwidth_up_kbps integer CONSTRAINT pending_runs_bandwidth_up_kbps_check CHECK (bandwidth_up_kbps > 0);
--> statement-breakpoint
ALTER TABLE pending_runs
  ADD COLUMN bandwidth_down_kbps integer CONSTRAINT pending_runs_bandwidth_down_kbps_check CHECK (bandwidth_down_kbps > 0);
