/**
 * @module tree/catalog-plan
 * Which snapshots of a source group the file catalogue still owes the server, oldest first. Each
 * delta says "these versions held from the base's time to this snapshot's", so a snapshot left
 * out makes the server believe its predecessor's versions lasted through it: a backup whose
 * catalogue step was stopped (the next group's backup of the same schedule preempts it) is
 * catalogued by a later run, before the snapshots that came after it. Candidates are the
 * repository's snapshots of the group's tag made under this host's name (a shared repository
 * holds other machines' snapshots of the same tag, which are theirs to catalogue). Without a base
 * only the newest is planned, as a full listing: history before the first catalogue is not
 * backfilled. Past the base at most CATALOG_CATCH_UP_MAX, the newest ones: the versions of older
 * ones fold into the first planned snapshot's delta, which bounds one run's restic listings.
 * Pure, so that the order, the filter and the cap are tested without restic or files.
 */
import type { Snapshot } from "@fleetback/protocol";
import type { CatalogBaseHeader } from "./catalog-state.js";

/** Snapshots one group catalogues in one run at most. */
export const CATALOG_CATCH_UP_MAX = 8;

export interface CatalogGroup {
  tag: string;
  /** The hostname this host's snapshots are made under (restic's `hostname` field). */
  hostname: string;
}

export interface CatalogPlan {
  /** To catalogue in this order, each against the one before (the first against the base). */
  snapshots: Snapshot[];
  /** Snapshots past the base left out for the cap; their versions fold into the first planned. */
  skipped: number;
}

/** The group's snapshots, oldest first; equal times keep restic's order. */
function groupSnapshots(listed: readonly Snapshot[], group: CatalogGroup): Snapshot[] {
  const own = listed.filter(
    (snapshot) => snapshot.hostname === group.hostname && snapshot.tags.includes(group.tag),
  );
  // `listed` is newest first (restic/snapshots-report.ts); reversed, ties are in restic's order.
  return own.reverse().sort((a, b) => Date.parse(a.time) - Date.parse(b.time));
}

export function planCatalogue(
  listed: readonly Snapshot[],
  group: CatalogGroup,
  base: Pick<CatalogBaseHeader, "snapshot_id" | "time"> | undefined,
  max = CATALOG_CATCH_UP_MAX,
): CatalogPlan {
  const own = groupSnapshots(listed, group);
  if (base === undefined) {
    const newest = own.at(-1);
    return { snapshots: newest === undefined ? [] : [newest], skipped: 0 };
  }
  const at = own.findIndex((snapshot) => snapshot.id === base.snapshot_id);
  // A base no longer listed (forgotten since): what came after its time.
  const after =
    at === -1
      ? own.filter((snapshot) => Date.parse(snapshot.time) > Date.parse(base.time))
      : own.slice(at + 1);
  const keep = Math.max(1, max);
  return after.length > keep
    ? { snapshots: after.slice(-keep), skipped: after.length - keep }
    : { snapshots: after, skipped: 0 };
}
