/**
 * @module restic/forget-output
 * Reads `restic forget --json` (testdata/restic `forget-*`): one JSON array on stdout, one entry
 * per restic group with `keep` and `remove` lists of snapshots. `remove` is null, not `[]`, when a
 * group removes nothing, on both 0.14 and 0.18.
 */
import type { ForgetCounts } from "@fleetback/protocol";
import { isObject, parseJsonArray } from "./backup-output.js";

export type ForgetResult = ForgetCounts;

function snapshotIds(list: unknown): string[] | undefined {
  if (list === null) {
    return [];
  }
  if (!Array.isArray(list)) {
    return undefined;
  }
  return list.map((snapshot) => {
    if (!isObject(snapshot)) {
      return "?";
    }
    if (typeof snapshot.short_id === "string") {
      return snapshot.short_id;
    }
    return typeof snapshot.id === "string" ? snapshot.id.slice(0, 8) : "?";
  });
}

/** undefined when the output is not the array restic prints. */
export function parseForgetOutput(stdout: string): ForgetResult | undefined {
  const parsed = parseJsonArray(stdout);
  if (parsed === undefined) {
    return undefined;
  }
  const result: ForgetResult = { kept: 0, removed: 0, removedIds: [] };
  for (const group of parsed) {
    if (!isObject(group)) {
      return undefined;
    }
    const kept = snapshotIds(group.keep);
    const removed = snapshotIds(group.remove);
    if (kept === undefined || removed === undefined) {
      return undefined;
    }
    result.kept += kept.length;
    result.removed += removed.length;
    result.removedIds.push(...removed);
  }
  return result;
}
