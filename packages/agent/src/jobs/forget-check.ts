/**
 * @module jobs/forget-check
 * A forget's result is what the repository lists afterwards, not what restic printed: restic
 * 0.18 on append-only storage prints the snapshots it meant to remove, fails every delete and
 * exits 0 (issue 31). So after restic has finished, the snapshot listing the job reports anyway
 * (snapshot-listing.ts) is also checked: a snapshot restic said it removed and the listing still
 * holds fails the job. When the listing itself fails, restic's word stands, as before.
 */
import type { Snapshot } from "@fleetback/protocol";
import type { JobRun } from "./job-types.js";
import type { RepositoryContext, RepositoryJobDeps } from "./repository-job.js";
import { reportSnapshotList } from "./snapshot-listing.js";

/** The ids of `removed` (short or full, as restic printed or the operator sent them) still in `listed`. */
export function stillListed(removed: readonly string[], listed: readonly Snapshot[]): string[] {
  return removed.filter(
    (id) => /^[0-9a-f]+$/.test(id) && listed.some((snapshot) => snapshot.id.startsWith(id)),
  );
}

const LISTED_IDS = 20;

export function stillListedError(ids: readonly string[]): string {
  const named = ids.slice(0, LISTED_IDS).join(", ");
  const more = ids.length > LISTED_IDS ? ` and ${ids.length - LISTED_IDS} more` : "";
  const what = ids.length === 1 ? `snapshot ${named}` : `snapshots ${named}${more}`;
  return `restic said it removed ${what}, but the repository still lists ${ids.length === 1 ? "it" : "them"} afterwards`;
}

export interface ListingAfterForget {
  /** What the repository holds now; undefined when the listing failed. */
  snapshots: readonly Snapshot[] | undefined;
  /** Set when a snapshot restic said it removed is still listed. */
  error?: string;
}

/**
 * Reports the snapshot list after a forget restic finished (on the mirror or a kept repository:
 * only lists it), and
 * checks `removed` against it.
 */
export async function listAfterForget(
  deps: RepositoryJobDeps,
  run: JobRun,
  context: RepositoryContext,
  removed: readonly string[],
): Promise<ListingAfterForget> {
  // The mirror's list, or a kept repository's, is checked too, but never reported: reports
  // describe this host's own repository.
  const elsewhere = run.command.on_mirror === true || run.command.kept === true;
  const reporting = elsewhere ? { ...deps, reportSnapshots: () => {} } : deps;
  const snapshots = await reportSnapshotList(reporting, run, context);
  const still = snapshots === undefined ? [] : stillListed(removed, snapshots);
  if (still.length === 0) {
    return { snapshots };
  }
  const error = stillListedError(still);
  run.log("agent", error);
  return { snapshots, error };
}
