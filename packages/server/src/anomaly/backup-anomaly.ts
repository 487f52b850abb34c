/**
 * @module anomaly/backup-anomaly
 * Is this backup what ransomware looks like? (issue 33, point 4). A backup's summary (restic's own
 * `summary` message, kept verbatim on the job) is compared with the recent successful backups of
 * the same source group. Encryption in place rewrites most files with bytes that neither compress
 * nor deduplicate; some variants write encrypted copies and delete the originals; wipers delete.
 * Ordinary life changes a small, steady share of files and adds a steady amount of data.
 *
 * A backup is anomalous when one of these holds (and at least MIN_HISTORY earlier backups of the
 * group exist: a first full backup, or the first few, are never judged):
 * - **Mass rewrite**: at least half of the files changed, at least MIN_FILES of them, and at least
 *   five times the group's median share of changed files.
 * - **Data surge**: the data added is at least ten times the median data added, and at least a
 *   quarter of the source (so a tiny baseline does not make a normal day look huge).
 * - **Replaced**: at least half of the previous backup's files are gone and as many new ones came
 *   (encrypted copies written, originals deleted: the unchanged-file count collapses).
 * - **Shrink**: the source lost at least half of its files (of at least MIN_FILES) or of its bytes
 *   since the previous backup.
 * Medians, not means: one big day in the history (a release, a restore) does not hide an attack
 * and does not make the next ordinary day look quiet.
 */

export interface BackupFacts {
  filesNew: number;
  filesChanged: number;
  filesUnmodified: number;
  totalFiles: number;
  bytesAdded: number;
  totalBytes: number;
}

export interface AnomalyVerdict {
  anomalous: boolean;
  /** Sentences naming the numbers, for the hold and its alert. */
  reasons: string[];
}

export const MIN_HISTORY = 3;
export const MIN_FILES = 3;
const REWRITE_SHARE = 0.5;
const REWRITE_OVER_MEDIAN = 5;
const SURGE_OVER_MEDIAN = 10;
const SURGE_SHARE_OF_SOURCE = 0.25;
const REPLACED_SHARE = 0.5;
const SHRINK_SHARE = 0.5;

function count(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/** The facts of restic's backup summary; undefined when it lacks one of them (never throws). */
export function backupFactsOf(summary: unknown): BackupFacts | undefined {
  if (typeof summary !== "object" || summary === null) {
    return undefined;
  }
  const s = summary as Record<string, unknown>;
  const facts = {
    filesNew: count(s.files_new),
    filesChanged: count(s.files_changed),
    filesUnmodified: count(s.files_unmodified),
    totalFiles: count(s.total_files_processed),
    bytesAdded: count(s.data_added),
    totalBytes: count(s.total_bytes_processed),
  };
  return Object.values(facts).every((value) => value !== undefined) ? (facts as BackupFacts) : undefined;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? 0)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

const percent = (share: number) => `${Math.round(share * 100)}%`;

function bytes(value: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let amount = value;
  let unit = 0;
  while (amount >= 1024 && unit < units.length - 1) {
    amount /= 1024;
    unit += 1;
  }
  return `${amount.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
}

/** Files of the previous backup that this one no longer has (restic reports no count of its own). */
export function filesRemoved(current: BackupFacts, previous: BackupFacts): number {
  return Math.max(0, previous.totalFiles - current.filesChanged - current.filesUnmodified);
}

/** `history`: the group's earlier successful backups, oldest first. */
export function judgeBackup(current: BackupFacts, history: readonly BackupFacts[]): AnomalyVerdict {
  const previous = history.at(-1);
  if (history.length < MIN_HISTORY || previous === undefined) {
    return { anomalous: false, reasons: [] };
  }
  const reasons: string[] = [];
  const changedShare = current.filesChanged / Math.max(1, current.totalFiles);
  const usualChanged = median(history.map((facts) => facts.filesChanged / Math.max(1, facts.totalFiles)));
  if (
    current.filesChanged >= MIN_FILES &&
    changedShare >= REWRITE_SHARE &&
    changedShare >= REWRITE_OVER_MEDIAN * usualChanged
  ) {
    reasons.push(
      `${percent(changedShare)} of the files changed (${current.filesChanged} of ${current.totalFiles}; usually ${percent(usualChanged)})`,
    );
  }
  const usualAdded = median(history.map((facts) => facts.bytesAdded));
  if (
    current.bytesAdded >= SURGE_OVER_MEDIAN * Math.max(1, usualAdded) &&
    current.bytesAdded >= SURGE_SHARE_OF_SOURCE * current.totalBytes
  ) {
    reasons.push(
      `${bytes(current.bytesAdded)} of new data, ${Math.round(current.bytesAdded / Math.max(1, usualAdded))} times the usual ${bytes(usualAdded)}`,
    );
  }
  const removed = filesRemoved(current, previous);
  if (
    previous.totalFiles >= MIN_FILES &&
    removed >= REPLACED_SHARE * previous.totalFiles &&
    current.filesNew >= removed
  ) {
    reasons.push(
      `${removed} of the ${previous.totalFiles} files are gone and ${current.filesNew} new ones came (originals replaced)`,
    );
  }
  const filesShrank =
    previous.totalFiles >= MIN_FILES && current.totalFiles <= (1 - SHRINK_SHARE) * previous.totalFiles;
  const bytesShrank =
    previous.totalBytes > 0 && current.totalBytes <= (1 - SHRINK_SHARE) * previous.totalBytes;
  if (filesShrank || bytesShrank) {
    reasons.push(
      `the source shrank from ${previous.totalFiles} files (${bytes(previous.totalBytes)}) to ${current.totalFiles} (${bytes(current.totalBytes)})`,
    );
  }
  return { anomalous: reasons.length > 0, reasons };
}
