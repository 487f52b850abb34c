/**
 * @module keepers/kept-success
 * What a keeper's job that succeeded tells about the host it keeps. The keeper reports no
 * `snapshots.report` or `repo.stats` for it (they would describe its own repository), so the
 * server records the upkeep itself: the forgotten ids leave the host's cached list, and the last
 * forget, prune and check times move on as the host's own reports would have moved them.
 */
import type { Database, Job } from "@fleetback/db";
import { applyRepoStats } from "../snapshots/repo-stats.js";
import { removeSnapshots } from "../snapshots/snapshot-store.js";

export async function recordKeptSuccess(
  db: Database,
  job: Pick<Job, "hostId" | "kind" | "params">,
  at: Date,
): Promise<void> {
  if (job.params.on_mirror === true) {
    return;
  }
  const stamp = at.toISOString();
  if (job.kind === "forget") {
    const ids = job.params.snapshot_ids;
    if (Array.isArray(ids)) {
      await removeSnapshots(
        db,
        job.hostId,
        ids.filter((id): id is string => typeof id === "string"),
      );
    }
    await applyRepoStats(db, job.hostId, { last_forget_at: stamp }, at);
  } else if (job.kind === "prune") {
    await applyRepoStats(db, job.hostId, { last_prune_at: stamp }, at);
  } else if (job.kind === "check") {
    await applyRepoStats(db, job.hostId, { last_check_status: "ok", last_check_at: stamp }, at);
  }
}
