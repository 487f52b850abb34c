/**
 * @module restic/backup-output
 * Reads `restic backup --json` output (recorded in testdata/restic). stdout carries `status` lines
 * (optional, timer-driven), verbose lines and exactly one `summary`; stderr carries `error` lines,
 * 0.18's `exit_error` and plain text. 0.14 prints `seconds_remaining` as 2^63 when nothing has
 * size, so every count is clamped to a safe integer, and 0.14's `error` objects are serialised Go
 * errors without message text.
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

function parseObject(text: string): JsonObject | undefined {
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
  const parsed = parseObject(text);
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

function describeError(error: unknown): string {
  if (!isObject(error)) {
    return typeof error === "string" ? error : JSON.stringify(error);
  }
  if (typeof error.message === "string") {
    return error.message;
  }
  // 0.14: a serialised *os.PathError such as {"Op":"read","Path":"/x","Err":5}.
  const parts = [error.Op, error.Path].filter((part): part is string => typeof part === "string");
  if (typeof error.Err === "number") {
    parts.push(`(errno ${error.Err})`);
  }
  return parts.length > 0 ? parts.join(" ") : JSON.stringify(error);
}

/** A stderr line as a person should read it: JSON `error` and `exit_error` lines become text. */
export function renderStderrLine(text: string): string {
  const parsed = parseObject(text);
  if (parsed?.message_type === "error") {
    const during = typeof parsed.during === "string" ? ` during ${parsed.during}` : "";
    const item = typeof parsed.item === "string" && parsed.item !== "" ? ` of ${parsed.item}` : "";
    return `error${during}${item}: ${describeError(parsed.error)}`;
  }
  if (parsed?.message_type === "exit_error" && typeof parsed.message === "string") {
    return parsed.message.replace(/\n+$/, "").replaceAll("\n", " / ");
  }
  return text;
}

const num = (value: unknown): number => (typeof value === "number" && Number.isFinite(value) ? value : 0);

function humanBytes(value: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let size = value;
  let unit = 0;
  while (size >= 1024 && unit < units.length - 1) {
    size /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${size} B` : `${size.toFixed(1)} ${units[unit]}`;
}

/**
 * The backup summary as one line a person reads in the job log; the full object travels in
 * job.finished.summary, so nothing is lost by not logging the raw JSON.
 */
export function describeSummary(summary: JobSummary): string {
  const id = typeof summary.snapshot_id === "string" ? summary.snapshot_id.slice(0, 8) : undefined;
  const files = `${num(summary.files_new)} new, ${num(summary.files_changed)} changed, ${num(summary.files_unmodified)} unmodified`;
  const processed = `${num(summary.total_files_processed)} files, ${humanBytes(num(summary.total_bytes_processed))}`;
  const took = typeof summary.total_duration === "number" ? ` in ${summary.total_duration.toFixed(1)} s` : "";
  const head = id ? `snapshot ${id} saved` : "backup finished without a new snapshot";
  return `${head}: files ${files}; ${humanBytes(num(summary.data_added))} added; processed ${processed}${took}`;
}
