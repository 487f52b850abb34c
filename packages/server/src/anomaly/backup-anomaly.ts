/**
 * @module anomaly/backup-anomaly
 * Whether a backup looks like ransomware or a wipe next to its group's recent baseline (issue 33),
 * so that no forget or prune removes the snapshots from before it until an admin has looked.
 *
 * Encryption rewrites most files with data that deduplicates against nothing stored, so a backup
 * is anomalous when both of these hold:
 * - At least half of the previous backup's files were changed or removed, and at least 3× the
 *   usual share. Removed counts because some lockers delete each original and write a new
 *   `.locked` file; the multiple because a set that churns every day (a cache, a spool) says
 *   nothing by churning again. An ordinary day changes a few percent.
 * - The data added is at least 4× the usual and at least min(64 MiB, 10% of the source). Alone
 *   this is an import, so it only counts with the churn. The floor keeps a quiet group's usual of a
 *   few KiB from making any edit look huge, and never asks for more than 64 MiB because current
 *   lockers (LockBit 3, BlackCat, Royal) encrypt only parts of large files. The usual is scaled by
 *   the time since the previous backup, up to a week's worth, so that a backup after days offline
 *   is weighed against days of change.
 * Churn without new data stays quiet: a `chmod -R`, a restore over the source or a tool resetting
 * mtimes makes restic reread most files and store next to nothing, and a backup restic made without
 * a parent (`--force`, new paths) counts every file new but stores nothing either.
 *
 * A wipe needs no churn: the source shrinking to half of both the previous backup and the usual,
 * in files (from at least 20) or in bytes (from at least 1 MiB), is anomalous by itself. An
 * unmounted disk backed up as an empty mount point looks the same, and its older snapshots then
 * deserve the hold just as much.
 *
 * Nothing is judged before 3 earlier backups of which 2 had a parent, so a group's first backups
 * never raise anything.
 */
import { formatBytes } from "@fleetback/web";
import { type BackupBaseline, baselineOf, changedShareOf } from "./backup-baseline.js";
import { type BackupFacts, filesRemovedSince } from "./backup-facts.js";

export const BACKUP_ANOMALY_THRESHOLDS = {
  minHistory: 3,
  minCompared: 2,
  changedShare: 0.5,
  changedShareOverUsual: 3,
  bytesAddedOverUsual: 4,
  bytesAddedFloor: 64 * 1024 * 1024,
  bytesAddedFloorShare: 0.1,
  maxIntervalsOfChange: 7,
  shrinkShare: 0.5,
  shrinkMinFiles: 20,
  shrinkMinBytes: 1024 * 1024,
} as const;

const T = BACKUP_ANOMALY_THRESHOLDS;

export interface AnomalyVerdict {
  anomalous: boolean;
  /** Sentences naming the numbers that made the backup anomalous; empty when it is not. */
  reasons: string[];
  /** Undefined when there were too few earlier backups to judge. */
  baseline: BackupBaseline | undefined;
}

function percent(share: number): string {
  return share > 0 && share < 0.01 ? "under 1%" : `${Math.round(share * 100)}%`;
}

/** The data a backup usually adds, for the time since the previous one. */
function expectedBytesAdded(current: BackupFacts, previous: BackupFacts, baseline: BackupBaseline): number {
  if (baseline.intervalMs === undefined) {
    return baseline.bytesAdded;
  }
  const intervals = (current.at.getTime() - previous.at.getTime()) / baseline.intervalMs;
  return baseline.bytesAdded * Math.min(Math.max(intervals, 1), T.maxIntervalsOfChange);
}

function rewriteReasons(current: BackupFacts, previous: BackupFacts, baseline: BackupBaseline): string[] {
  const share = changedShareOf(previous, current);
  const removed = filesRemovedSince(previous, current) ?? 0;
  if (
    share === undefined ||
    share < T.changedShare ||
    share < T.changedShareOverUsual * baseline.changedShare
  ) {
    return [];
  }
  const expected = expectedBytesAdded(current, previous, baseline);
  const floor = Math.min(T.bytesAddedFloor, T.bytesAddedFloorShare * previous.totalBytes);
  if (current.bytesAdded < T.bytesAddedOverUsual * expected || current.bytesAdded < floor) {
    return [];
  }
  return [
    `${percent(share)} of the ${previous.totalFiles} files of the previous backup changed or disappeared ` +
      `(${current.filesChanged} changed, ${removed} removed, ${current.filesNew} new; usual: ${percent(baseline.changedShare)})`,
    `${formatBytes(current.bytesAdded)} of new data was stored (usual: ${formatBytes(Math.round(expected))})`,
  ];
}

function hasShrunk(now: number, previous: number, usual: number, minimum: number): boolean {
  return usual >= minimum && now <= T.shrinkShare * previous && now <= T.shrinkShare * usual;
}

function shrinkReasons(current: BackupFacts, previous: BackupFacts, baseline: BackupBaseline): string[] {
  const reasons: string[] = [];
  if (hasShrunk(current.totalFiles, previous.totalFiles, baseline.totalFiles, T.shrinkMinFiles)) {
    reasons.push(
      `the source shrank from ${previous.totalFiles} files to ${current.totalFiles} (usual: ${Math.round(baseline.totalFiles)})`,
    );
  }
  if (hasShrunk(current.totalBytes, previous.totalBytes, baseline.totalBytes, T.shrinkMinBytes)) {
    reasons.push(
      `the source shrank from ${formatBytes(previous.totalBytes)} to ${formatBytes(current.totalBytes)} ` +
        `(usual: ${formatBytes(Math.round(baseline.totalBytes))})`,
    );
  }
  return reasons;
}

/** Judges `current` against `history`: the group's recent successful backups, oldest first, without it. */
export function judgeBackup(current: BackupFacts, history: readonly BackupFacts[]): AnomalyVerdict {
  const previous = history.at(-1);
  const baseline = history.length < T.minHistory ? undefined : baselineOf(history, T.minCompared);
  if (previous === undefined || baseline === undefined) {
    return { anomalous: false, reasons: [], baseline };
  }
  const reasons = [
    ...rewriteReasons(current, previous, baseline),
    ...shrinkReasons(current, previous, baseline),
  ];
  return { anomalous: reasons.length > 0, reasons, baseline };
}
