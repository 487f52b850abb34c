/**
 * @module snapshots/diff-pair
 * Which two snapshots the compare form starts with: the two newest of one group, because a diff
 * of two different groups' snapshots (say /etc against /home) lists every file as added and
 * removed. A snapshot's group is the host's source group it is tagged with; a snapshot of no
 * source group (made outside Fleetback) is grouped as restic groups by default, by its tags and
 * paths. The newest snapshot's group is taken when it has two; else the newest group that has.
 */
import type { Snapshot } from "@fleetback/db";

export interface DiffPair {
  /** Older (A). */
  a: string;
  /** Newer (B). */
  b: string;
}

export function snapshotGroupKey(
  snapshot: Pick<Snapshot, "tags" | "paths">,
  groupNames: ReadonlySet<string>,
): string {
  const group = snapshot.tags.find((tag) => groupNames.has(tag));
  if (group !== undefined) {
    return `group:${group}`;
  }
  return `restic:${[...snapshot.tags].sort().join(",")}|${[...snapshot.paths].sort().join(",")}`;
}

/** `snapshots` newest first, as the page lists them; undefined when no group has two. */
export function defaultDiffPair(
  snapshots: readonly Pick<Snapshot, "id" | "tags" | "paths">[],
  groupNames: readonly string[],
): DiffPair | undefined {
  const names = new Set(groupNames);
  const byGroup = new Map<string, string[]>();
  let firstComplete: string | undefined;
  for (const snapshot of snapshots) {
    const key = snapshotGroupKey(snapshot, names);
    const ids = byGroup.get(key) ?? [];
    ids.push(snapshot.id);
    byGroup.set(key, ids);
    if (ids.length === 2 && firstComplete === undefined) {
      firstComplete = key;
    }
  }
  const newest = snapshots[0];
  const newestGroup = newest ? byGroup.get(snapshotGroupKey(newest, names)) : undefined;
  const ids =
    newestGroup && newestGroup.length >= 2
      ? newestGroup
      : firstComplete
        ? byGroup.get(firstComplete)
        : undefined;
  const [b, a] = ids ?? [];
  return a !== undefined && b !== undefined ? { a, b } : undefined;
}
