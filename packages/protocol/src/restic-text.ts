/**
 * @module restic-text
 * restic's JSON output as sentences for people (issue 36, one vocabulary). The agent words what
 * it logs with these (a backup's summary, stderr `error` lines, forget results, repository stats)
 * and the server words the restic JSON lines an agent forwarded as restic printed them (restore
 * `-vv`, diff, init, forget) with the same functions, so one message reads the same wherever it
 * is shown. Both read restic 0.14 to 0.18 (testdata/restic). No imports beyond this package: the
 * agent and the server both load it, and nothing here needs Node.
 */
import type { JobSummary, RepoStats } from "./agent-messages.js";

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  value !== null && typeof value === "object" && !Array.isArray(value);
const num = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isFinite(value) ? value : undefined;
const count = (n: number) => n.toLocaleString("en");
const plural = (n: number, one: string, many = `${one}s`) => `${count(n)} ${n === 1 ? one : many}`;

const UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];

/**
 * Binary units with the web package's rule ("1.50 KiB", "64.1 KiB"), so a size in a log line reads
 * like the same size in the page's tables; that rule lives in a browser module without imports,
 * which this package cannot load.
 */
export function resticBytes(value: number): string {
  if (!Number.isFinite(value) || value < 0) {
    return "–";
  }
  let size = value;
  let unit = 0;
  while (size >= 1024 && unit < UNITS.length - 1) {
    size /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${size} B` : `${size.toFixed(size < 10 ? 2 : 1)} ${UNITS[unit]}`;
}

function percent(value: unknown): string {
  const fraction = num(value) ?? 0;
  return `${(Math.min(Math.max(fraction, 0), 1) * 100).toFixed(1)} %`;
}

function ofTotal(done: unknown, total: unknown): string | undefined {
  const d = num(done);
  const t = num(total);
  if (d === undefined && t === undefined) {
    return undefined;
  }
  return t === undefined ? resticBytes(d ?? 0) : `${resticBytes(d ?? 0)} of ${resticBytes(t)}`;
}

/** restic's `error` field: 0.18 has a message; 0.14 serialises Go errors such as *os.PathError. */
export function describeResticError(error: unknown): string {
  if (!isObject(error)) {
    return typeof error === "string" ? error : JSON.stringify(error);
  }
  if (typeof error.message === "string") {
    return error.message;
  }
  const parts = [error.Op, error.Path].filter((part): part is string => typeof part === "string");
  if (typeof error.Err === "number") {
    parts.push(`(errno ${error.Err})`);
  }
  return parts.length > 0 ? parts.join(" ") : JSON.stringify(error);
}

/**
 * A backup's summary as one line; the full object travels in job.finished.summary, so the agent
 * logs this instead of restic's JSON.
 */
export function describeBackupSummary(summary: JobSummary): string {
  const n = (value: unknown) => count(num(value) ?? 0);
  const id = typeof summary.snapshot_id === "string" ? summary.snapshot_id.slice(0, 8) : undefined;
  const files = `${n(summary.files_new)} new, ${n(summary.files_changed)} changed, ${n(summary.files_unmodified)} unmodified`;
  const processed = `${n(summary.total_files_processed)} files, ${resticBytes(num(summary.total_bytes_processed) ?? 0)}`;
  const seconds = num(summary.total_duration);
  const took = seconds === undefined ? "" : ` in ${seconds.toFixed(1)} s`;
  const head = id ? `snapshot ${id} saved` : "backup finished without a new snapshot";
  return `${head}: files ${files}; ${resticBytes(num(summary.data_added) ?? 0)} added; processed ${processed}${took}`;
}

function restoreSummary(m: Json): string {
  const parts = [`restored ${plural(num(m.files_restored) ?? 0, "file")}`];
  const bytes = ofTotal(m.bytes_restored, m.total_bytes);
  if (bytes !== undefined) {
    parts[0] += `, ${bytes}`;
  }
  if (num(m.total_files) !== undefined) {
    parts.push(`${plural(num(m.total_files) ?? 0, "file")} in the selection`);
  }
  if ((num(m.files_skipped) ?? 0) > 0) {
    parts.push(
      `skipped ${plural(num(m.files_skipped) ?? 0, "file")} (${resticBytes(num(m.bytes_skipped) ?? 0)})`,
    );
  }
  if ((num(m.files_deleted) ?? 0) > 0) {
    parts.push(`deleted ${plural(num(m.files_deleted) ?? 0, "file")}`);
  }
  return parts.join("; ");
}

function diffSide(side: unknown): string {
  if (!isObject(side)) {
    return "–";
  }
  return `${plural(num(side.files) ?? 0, "file")}, ${plural(num(side.dirs) ?? 0, "dir")}, ${resticBytes(num(side.bytes) ?? 0)}`;
}

const CHANGE_MEANING: Record<string, string> = {
  "+": "added",
  "-": "removed",
  M: "content changed",
  T: "type changed",
  U: "metadata changed",
  "?": "bitrot",
};

/** The sentence for one restic JSON message, or undefined for a message type not known here. */
export function describeResticMessage(m: Json): string | undefined {
  switch (m.message_type) {
    case "verbose_status": {
      const action = typeof m.action === "string" ? m.action : "restored";
      const size = num(m.size);
      return `${action} ${String(m.item)}${size ? ` (${resticBytes(size)})` : ""}`;
    }
    case "status": {
      const filesDone = num(m.files_restored ?? m.files_done) ?? 0;
      const filesTotal = num(m.total_files);
      const files =
        filesTotal === undefined
          ? plural(filesDone, "file")
          : `${count(filesDone)} of ${plural(filesTotal, "file")}`;
      const bytes = ofTotal(m.bytes_restored ?? m.bytes_done, m.total_bytes);
      return [percent(m.percent_done), files, bytes].filter(Boolean).join(", ");
    }
    case "summary":
      return "files_restored" in m || "bytes_restored" in m ? restoreSummary(m) : describeBackupSummary(m);
    case "change": {
      const modifier = typeof m.modifier === "string" ? m.modifier : "?";
      const meaning = [...modifier].map((c) => CHANGE_MEANING[c]).filter(Boolean);
      return `${modifier} ${String(m.path)}${meaning.length > 0 ? ` (${meaning.join(", ")})` : ""}`;
    }
    case "statistics":
      return `${plural(num(m.changed_files) ?? 0, "file")} changed; added ${diffSide(m.added)}; removed ${diffSide(m.removed)}`;
    case "initialized":
      return `created restic repository ${String(m.id).slice(0, 10)} at ${String(m.repository)}`;
    case "error": {
      const during = typeof m.during === "string" ? ` during ${m.during}` : "";
      const item = typeof m.item === "string" && m.item !== "" ? ` of ${m.item}` : "";
      return `error${during}${item}: ${describeResticError(m.error)}`;
    }
    case "exit_error":
      return typeof m.message === "string"
        ? m.message.replace(/\n+$/, "").replaceAll("\n", " / ")
        : undefined;
    default:
      return undefined;
  }
}

/** `restic forget --json`: one array of groups, each with `keep` and `remove` (null for none). */
function describeForgetGroups(groups: unknown[]): string | undefined {
  let kept = 0;
  let removed = 0;
  for (const group of groups) {
    if (!isObject(group) || !("keep" in group)) {
      return undefined;
    }
    kept += Array.isArray(group.keep) ? group.keep.length : 0;
    removed += Array.isArray(group.remove) ? group.remove.length : 0;
  }
  return `forget result: ${plural(groups.length, "group")}, ${plural(kept, "snapshot")} kept, ${plural(removed, "snapshot")} removed`;
}

function parseJson(line: string): unknown {
  const trimmed = line.trimStart();
  if (!trimmed.startsWith("{") && !trimmed.startsWith("[")) {
    return undefined;
  }
  try {
    return JSON.parse(trimmed);
  } catch {
    // Not JSON after all, or cut at the agent's line cap.
    return undefined;
  }
}

/** The sentence for one line restic printed with --json; undefined when it is not one known here. */
export function describeResticLine(line: string): string | undefined {
  const parsed = parseJson(line);
  if (isObject(parsed)) {
    return describeResticMessage(parsed);
  }
  return Array.isArray(parsed) ? describeForgetGroups(parsed) : undefined;
}

/**
 * A stderr line as a person should read it: JSON `error` and `exit_error` become text, anything
 * else (plain text from older versions, retries) stays as restic printed it.
 */
export function renderStderrLine(text: string): string {
  const parsed = text.startsWith("{") ? parseJson(text) : undefined;
  if (isObject(parsed) && (parsed.message_type === "error" || parsed.message_type === "exit_error")) {
    return describeResticMessage(parsed) ?? text;
  }
  return text;
}

/** What one `restic forget --json` run removed for one tag, as the agent counts it. */
export interface ForgetCounts {
  kept: number;
  removed: number;
  /** Short ids of the removed snapshots, in restic's order. */
  removedIds: string[];
}

const LISTED_IDS = 20;

/** One log line per tag: what forget removed, for the people reading the job log. */
export function describeForget(tag: string, result: ForgetCounts): string {
  if (result.removed === 0) {
    return `forget tag ${tag}: removed 0 snapshots, kept ${result.kept}`;
  }
  const listed = result.removedIds.slice(0, LISTED_IDS).join(", ");
  const more = result.removed > LISTED_IDS ? ` and ${result.removed - LISTED_IDS} more` : "";
  return `forget tag ${tag}: removed ${result.removed} snapshot${result.removed === 1 ? "" : "s"} (${listed}${more}), kept ${result.kept}`;
}

/** `restic stats --mode raw-data` as the agent reads it, in one line. */
export function describeRepoStats(stats: RepoStats): string {
  const parts = [`${stats.snapshot_count ?? "?"} snapshots`, `${stats.raw_size_bytes ?? "?"} bytes stored`];
  if (stats.total_size_bytes !== undefined) {
    parts.push(`${stats.total_size_bytes} bytes uncompressed`);
  }
  if (stats.compression_ratio !== undefined) {
    parts.push(`compression ratio ${stats.compression_ratio.toFixed(2)}`);
  }
  return parts.join(", ");
}
