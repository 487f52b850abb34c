/**
 * @module anomaly/backup-facts
 * The few numbers of a backup the anomaly detector weighs, read from restic's own `summary`
 * (jobs.summary, stored verbatim; keys vary by restic version). restic reports no removed files:
 * it compares each file with the same path in its parent snapshot, so every file of the parent is
 * either changed, unmodified or gone, and the gone ones are the parent's total less the other two.
 * The parent is the latest snapshot of the same host and paths, which for our agent is the group's
 * previous backup.
 */
export interface BackupFacts {
  filesNew: number;
  filesChanged: number;
  filesUnmodified: number;
  totalFiles: number;
  /** Data restic stored for this backup, before compression: what did not deduplicate. */
  bytesAdded: number;
  totalBytes: number;
  /**
   * False when restic compared with no earlier snapshot (a group's first backup, `--force`, new
   * paths): then every file and directory counts as new and nothing can be said about removals.
   */
  hadParent: boolean;
  at: Date;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function countOf(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/**
 * The facts of a backup job's summary, or undefined when it is not a restic backup summary.
 * `at` is the job's own time: restic before 0.17 puts none in its summary.
 */
export function backupFactsOf(summary: unknown, at: Date): BackupFacts | undefined {
  if (!isRecord(summary) || Number.isNaN(at.getTime())) {
    return undefined;
  }
  const filesNew = countOf(summary.files_new);
  const filesChanged = countOf(summary.files_changed);
  const filesUnmodified = countOf(summary.files_unmodified);
  const totalFiles = countOf(summary.total_files_processed);
  const bytesAdded = countOf(summary.data_added);
  const totalBytes = countOf(summary.total_bytes_processed);
  if (
    filesNew === undefined ||
    filesChanged === undefined ||
    filesUnmodified === undefined ||
    totalFiles === undefined ||
    bytesAdded === undefined ||
    totalBytes === undefined
  ) {
    return undefined;
  }
  // A parent leaves its mark on the directories even when every file was renamed away.
  const seenBefore =
    filesChanged +
    filesUnmodified +
    (countOf(summary.dirs_changed) ?? 0) +
    (countOf(summary.dirs_unmodified) ?? 0);
  return {
    filesNew,
    filesChanged,
    filesUnmodified,
    totalFiles,
    bytesAdded,
    totalBytes,
    hadParent: seenBefore > 0,
    at,
  };
}

/** Files of `previous` that `current` no longer has, or undefined when restic compared with none. */
export function filesRemovedSince(previous: BackupFacts, current: BackupFacts): number | undefined {
  if (!current.hadParent) {
    return undefined;
  }
  return Math.max(0, previous.totalFiles - current.filesChanged - current.filesUnmodified);
}
