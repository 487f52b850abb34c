/**
 * @module job-page/summary-render
 * A job's `summary` (restic's own summary object for backup and restore, diff statistics, the
 * agent's counts for forget, drill and copy) as labelled rows: sizes in binary units, durations, counts
 * with separators, times as ISO (with `at` for the page to print), snapshot ids shortened. A key not known here keeps its name
 * and its JSON, so nothing a newer agent sends is hidden; the page also offers the whole object.
 */
import { formatBytes, formatDuration, formatIso } from "@fleetback/web";

export interface SummaryRow {
  key: string;
  label: string;
  value: string;
  /** A time row's moment (ISO), for the page to print as it prints every moment. */
  at?: string;
}

type Format = "count" | "bytes" | "seconds" | "time" | "snapshot" | "text" | "side" | "changes" | "list";

const KNOWN: Record<string, [label: string, format: Format]> = {
  // backup (restic's summary message)
  snapshot_id: ["Snapshot", "snapshot"],
  files_new: ["New files", "count"],
  files_changed: ["Changed files", "count"],
  files_unmodified: ["Unmodified files", "count"],
  dirs_new: ["New folders", "count"],
  dirs_changed: ["Changed folders", "count"],
  dirs_unmodified: ["Unmodified folders", "count"],
  data_blobs: ["Data blobs", "count"],
  tree_blobs: ["Tree blobs", "count"],
  data_added: ["Data added", "bytes"],
  data_added_packed: ["Data added (stored, compressed)", "bytes"],
  total_files_processed: ["Files processed", "count"],
  total_bytes_processed: ["Data processed", "bytes"],
  total_duration: ["Duration", "seconds"],
  backup_start: ["Started", "time"],
  backup_end: ["Ended", "time"],
  // restore
  total_files: ["Files selected", "count"],
  files_restored: ["Files and folders restored", "count"],
  files_skipped: ["Files skipped", "count"],
  files_deleted: ["Files deleted", "count"],
  total_bytes: ["Data selected", "bytes"],
  bytes_restored: ["Data restored", "bytes"],
  bytes_skipped: ["Data skipped", "bytes"],
  seconds_elapsed: ["Duration", "seconds"],
  // diff
  source_snapshot: ["From snapshot", "snapshot"],
  target_snapshot: ["To snapshot", "snapshot"],
  changed_files: ["Changed files", "count"],
  added: ["Added", "side"],
  removed: ["Removed", "side"],
  changes: ["Paths", "changes"],
  // forget
  snapshots_removed: ["Snapshots removed", "count"],
  snapshots_kept: ["Snapshots kept", "count"],
  groups: ["Tag groups", "list"],
  // drill
  files_in_snapshot: ["Files in the snapshot", "count"],
  files_checked: ["Files restored and verified", "count"],
  bytes_checked: ["Data restored and verified", "bytes"],
  mismatch_count: ["Mismatches", "count"],
  mismatches: ["Mismatched files", "list"],
  // copy to the mirror (CopySummary)
  initialised: ["Mirror created by this copy", "text"],
  requested: ["Snapshots to copy", "count"],
  mirrored: ["Of those, in the mirror now", "count"],
  missing: ["Not in the mirror", "list"],
  mirror_snapshot_count: ["Snapshots in the mirror", "count"],
  mirror_latest_time: ["Newest snapshot in the mirror", "time"],
};

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);
const finite = (value: unknown): value is number => typeof value === "number" && Number.isFinite(value);

const plural = (n: number, one: string) => `${n.toLocaleString("en")} ${one}${n === 1 ? "" : "s"}`;
const raw = (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value));

function format(value: unknown, kind: Format): string | undefined {
  switch (kind) {
    case "count":
      return finite(value) ? value.toLocaleString("en") : undefined;
    case "bytes":
      return finite(value) ? formatBytes(value) : undefined;
    case "seconds":
      return finite(value) && value >= 0 ? formatDuration(value) : undefined;
    case "time": {
      // ISO here; the page prints the row's `at` as every other moment (the `when` filter).
      const iso = typeof value === "string" ? formatIso(value) : "–";
      return iso === "–" ? undefined : iso;
    }
    case "snapshot":
      return typeof value === "string" ? value.slice(0, 8) : undefined;
    case "text":
      return typeof value === "string"
        ? value
        : typeof value === "boolean"
          ? value
            ? "yes"
            : "no"
          : undefined;
    case "side":
      if (!isObject(value)) {
        return undefined;
      }
      return [
        finite(value.files) ? plural(value.files, "file") : undefined,
        finite(value.dirs) ? plural(value.dirs, "folder") : undefined,
        finite(value.others) && value.others > 0 ? plural(value.others, "other") : undefined,
        finite(value.bytes) ? formatBytes(value.bytes) : undefined,
      ]
        .filter(Boolean)
        .join(", ");
    case "changes":
      if (!isObject(value)) {
        return undefined;
      }
      return Object.entries(value)
        .filter(([, n]) => finite(n))
        .map(([name, n]) => `${(n as number).toLocaleString("en")} ${name}`)
        .join(", ");
    case "list":
      return Array.isArray(value)
        ? value.length === 0
          ? "none"
          : `${value.length} listed in the raw JSON`
        : undefined;
  }
}

/** The rows of a summary, in the order the summary has them; null or empty: none. */
export function summaryRows(summary: Record<string, unknown> | null | undefined): SummaryRow[] {
  if (!summary) {
    return [];
  }
  return Object.entries(summary).map(([key, value]) => {
    const known = KNOWN[key];
    const formatted = known ? format(value, known[1]) : undefined;
    if (!known || formatted === undefined) {
      return { key, label: key, value: raw(value) };
    }
    return known[1] === "time"
      ? { key, label: known[0], value: formatted, at: formatted }
      : { key, label: known[0], value: formatted };
  });
}
