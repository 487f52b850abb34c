/**
 * @module restic/backup-output
 * Reads `restic backup --json` output (recorded in testdata/restic). stdout carries `status` lines
 * (optional, timer-driven), verbose lines and exactly one `summary`; stderr carries `error` lines,
 * 0.18's `exit_error` and plain text. 0.14 prints `seconds_remaining` as 2^63 when nothing has
 * size, so every count is clamped to a safe integer, and 0.14's `error` objects are serialised Go
 * errors without message text. The sentences logged for these lines come from the protocol's
 * restic-text, which the server's job page words restic's lines with too.
 */
import type { JobProgress, JobSummary } from "@fleetback/protocol";

/** A `job.progress` before the job it belongs to is named. */
export type ProgressState = Omit<JobProgress, "job_id">;

export type BackupLine =
  | { kind: "status"; progress: ProgressState }
  /** A status line that measures nothing yet (see parseBackupLine): shown as unknown, not sent. */
  | { kind: "unmeasured" }
  | { kind: "summary"; summary: JobSummary }
  | { kind: "other" };

type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** One line of restic's JSON output as an object; undefined for any other line (text, arrays, junk). */
export function parseJsonObject(text: string): JsonObject | undefined {
  if (!text.startsWith("{")) {
    return undefined;
  }
  try {
    const parsed: unknown = JSON.parse(text);
    return isObject(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** A whole stdout that is one JSON array (`forget --json`, `snapshots --json`); undefined otherwise. */
export function parseJsonArray(stdout: string): unknown[] | undefined {
  try {
    const parsed: unknown = JSON.parse(stdout);
    return Array.isArray(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** A non-negative safe integer, or undefined when the field is absent or not a number. */
export function count(value: unknown): number | undefined {
  if (typeof value !== "number" || Number.isNaN(value)) {
    return undefined;
  }
  return Math.min(Math.max(0, Math.floor(value)), Number.MAX_SAFE_INTEGER);
}

/**
 * 0.14 prints seconds_remaining as 2^63 when it cannot estimate (nothing has size yet): no
 * estimate, not 292 billion years.
 */
function estimate(value: unknown): number | undefined {
  return typeof value === "number" && value <= Number.MAX_SAFE_INTEGER ? count(value) : undefined;
}

export function progressOf(status: JsonObject): ProgressState {
  const percent = typeof status.percent_done === "number" ? status.percent_done : 0;
  const filesTotal = count(status.total_files);
  const bytesTotal = count(status.total_bytes);
  const eta = estimate(status.seconds_remaining);
  const currentFile = Array.isArray(status.current_files) ? status.current_files[0] : undefined;
  return {
    percent_done: Number.isFinite(percent) ? Math.min(Math.max(percent, 0), 1) : 0,
    files_done: count(status.files_done) ?? 0,
    ...(filesTotal === undefined ? {} : { files_total: filesTotal }),
    bytes_done: count(status.bytes_done) ?? 0,
    ...(bytesTotal === undefined ? {} : { bytes_total: bytesTotal }),
    ...(eta === undefined ? {} : { eta_seconds: eta }),
    ...(typeof currentFile === "string" ? { current_file: currentFile } : {}),
  };
}

/** Classifies one stdout line. */
export function parseBackupLine(text: string): BackupLine {
  const parsed = parseJsonObject(text);
  // 0.14 prints verbose `scan_finished` as message_type "status": it has no percent.
  if (parsed?.message_type === "status" && typeof parsed.percent_done === "number") {
    // restic leaves out zero counts. A line with neither files_done nor bytes_done is the one
    // printed as the run starts (0.14 prints it always, and for a short backup nothing else): its
    // totals are what the scanner found in its first moment ("0 of 1 files"), so the page keeps
    // showing "unknown" until restic has measured something.
    if (parsed.files_done === undefined && parsed.bytes_done === undefined) {
      return { kind: "unmeasured" };
    }
    return { kind: "status", progress: progressOf(parsed) };
  }
  if (parsed?.message_type === "summary") {
    const { message_type: _type, ...summary } = parsed;
    return { kind: "summary", summary };
  }
  return { kind: "other" };
}
