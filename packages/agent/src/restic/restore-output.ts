/**
 * @module restic/restore-output
 * Reads `restic restore` output (testdata/restic `restore-*`). With `--json` (0.16+; verified on
 * 0.18) stdout carries `status` lines on longer restores, one `verbose_status` per restored item
 * with `-vv` (0.17+), and one `summary`. 0.14 prints a single text line and no counts at all.
 * `files_restored` counts directories too and can exceed `total_files` (5006 of 5001), so the
 * progress clamps it; the summary goes out unchanged. Counts of zero are left out: a restore whose
 * includes match nothing ends with exit 0 and a bare `{"message_type":"summary"}` (0.18).
 */
import type { JobSummary } from "@fleetback/protocol";
import { count, type ProgressState, parseJsonObject } from "./backup-output.js";

export type RestoreLine =
  | { kind: "status"; progress: ProgressState; secondsElapsed: number | undefined }
  | { kind: "file"; item: string }
  | { kind: "summary"; summary: JobSummary; progress: ProgressState }
  | { kind: "other" };

function progressOf(fields: Record<string, unknown>, percent: number): ProgressState {
  const filesTotal = count(fields.total_files);
  const bytesTotal = count(fields.total_bytes);
  const filesDone = count(fields.files_restored) ?? 0;
  return {
    percent_done: Number.isFinite(percent) ? Math.min(Math.max(percent, 0), 1) : 0,
    files_done: filesTotal === undefined ? filesDone : Math.min(filesDone, filesTotal),
    ...(filesTotal === undefined ? {} : { files_total: filesTotal }),
    bytes_done: count(fields.bytes_restored) ?? 0,
    ...(bytesTotal === undefined ? {} : { bytes_total: bytesTotal }),
  };
}

export function parseRestoreLine(text: string): RestoreLine {
  const parsed = parseJsonObject(text);
  if (parsed === undefined) {
    return { kind: "other" };
  }
  if (parsed.message_type === "status" && typeof parsed.percent_done === "number") {
    return {
      kind: "status",
      progress: progressOf(parsed, parsed.percent_done),
      secondsElapsed: count(parsed.seconds_elapsed),
    };
  }
  if (parsed.message_type === "verbose_status" && typeof parsed.item === "string") {
    return { kind: "file", item: parsed.item };
  }
  if (parsed.message_type === "summary") {
    const { message_type: _type, ...summary } = parsed;
    return { kind: "summary", summary, progress: progressOf(parsed, 1) };
  }
  return { kind: "other" };
}

/**
 * True when restic's summary says the restore selected nothing at all. Every matched node counts
 * in `total_files`, an empty directory too; one skipped as unchanged counts in `files_skipped`.
 */
export function summaryRestoredNothing(summary: JobSummary): boolean {
  return ["total_files", "files_restored", "files_skipped"].every(
    (field) => (count(summary[field]) ?? 0) === 0,
  );
}

/** Seconds left, estimated by the agent from the elapsed time and the fraction done. */
export function estimateEta(elapsedMs: number, percent: number): number | undefined {
  if (percent >= 1) {
    return 0;
  }
  if (percent <= 0.001 || elapsedMs <= 0) {
    return undefined;
  }
  return Math.round((elapsedMs / 1000) * ((1 - percent) / percent));
}
