/**
 * @module anomaly/backup-baseline
 * What a group's recent backups usually look like, in medians: a single odd backup among them (a
 * big import, a missed night) then moves nothing. Only backups restic compared with a parent
 * describe change; a group's first backup stores the whole source and would make any later one
 * look small.
 */
import { type BackupFacts, filesRemovedSince } from "./backup-facts.js";

export interface BackupBaseline {
  /** Earlier backups considered, and how many of them restic compared with a parent. */
  backups: number;
  compared: number;
  /** Share of the previous backup's files changed or removed, 0 to 1. */
  changedShare: number;
  bytesAdded: number;
  totalFiles: number;
  totalBytes: number;
  /** Time between backups; undefined when they all share one time. */
  intervalMs: number | undefined;
}

export function median(values: readonly number[]): number | undefined {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  const high = sorted[middle];
  if (high === undefined) {
    return undefined;
  }
  const low = sorted.length % 2 === 0 ? (sorted[middle - 1] ?? high) : high;
  return (low + high) / 2;
}

/** Share of `previous`'s files that `current` changed or no longer has; undefined without a parent. */
export function changedShareOf(previous: BackupFacts, current: BackupFacts): number | undefined {
  const removed = filesRemovedSince(previous, current);
  if (removed === undefined || previous.totalFiles === 0) {
    return undefined;
  }
  return Math.min(1, (current.filesChanged + removed) / previous.totalFiles);
}

/** The baseline of `history` (oldest first), or undefined when fewer than `minCompared` had a parent. */
export function baselineOf(history: readonly BackupFacts[], minCompared: number): BackupBaseline | undefined {
  const compared = history.filter((backup) => backup.hadParent);
  if (compared.length < minCompared) {
    return undefined;
  }
  const shares: number[] = [];
  const intervals: number[] = [];
  history.forEach((backup, index) => {
    const previous = history[index - 1];
    if (previous === undefined) {
      return;
    }
    const share = changedShareOf(previous, backup);
    if (share !== undefined) {
      shares.push(share);
    }
    intervals.push(backup.at.getTime() - previous.at.getTime());
  });
  const interval = median(intervals);
  return {
    backups: history.length,
    compared: compared.length,
    changedShare: median(shares) ?? 0,
    bytesAdded: median(compared.map((backup) => backup.bytesAdded)) ?? 0,
    totalFiles: median(history.map((backup) => backup.totalFiles)) ?? 0,
    totalBytes: median(history.map((backup) => backup.totalBytes)) ?? 0,
    intervalMs: interval !== undefined && interval > 0 ? interval : undefined,
  };
}
