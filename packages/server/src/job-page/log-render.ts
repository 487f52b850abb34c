/**
 * @module job-page/log-renderNone
 * Job log lines as people read them. The agent forwards some restic output as restic printed it:
 * JSON lines of `restore --json -vv`, `diff --json`, `init --json` and `forget --json`
 * (testdata/restic), and plain stderr such as 0.18's `Stat(<config/>) returned error, retrying
 * after 2.3s: …` while a repository cannot be reached. Each line becomes one sentence; a line
 * whose sentence differs from what restic printed keeps that in `raw`, which the page shows
 * behind a toggle. Terminal control codes are removed here too, for lines stored by agents that
 * still sent them.
 */
import { stripTerminalCodes } from "@fleetback/protocol";
import { formatBytes } from "@fleetback/web";

export interface RenderedLogLine {
  /** What the page shows. */
  text: string;
  /** The line as the agent sent it, when `text` says it differently. */
  raw?: string;
  /** restic is retrying a repository request that failed (a dead or flaky repository). */
  retry: boolean;
}

/** restic's backend retry line, 0.14 to 0.18: `Load(<data/1a2b…>, 0, 0) returned error, retrying after 1.5s: …`. */
export const RETRY_LINE = /\) returned error, retrying after \S+?:/;
/** The SQL LIKE pattern that finds the same lines in the stored log. */
export const RETRY_LIKE = "%) returned error, retrying after %";

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  value !== null && typeof value === "object" && !Array.isArray(value);
const num = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isFinite(value) ? value : undefined;
const plural = (n: number, one: string, many = `${one}s`) =>
  `${n.toLocaleString("en")} ${n === 1 ? one : many}`;

function percent(value: unknown): string {
  const fraction = num(value) ?? 0;
  return `${(Math.min(Math.max(fraction, 0), 1) * 100).toFixed(1)} %`;
}

function ofTotal(done: unknown, total: unknown, format: (n: number) => string): string | undefined {
  const d = num(done);
  const t = num(total);
  if (d === undefined && t === undefined) {
    return undefined;
  }
  return t === undefined ? format(d ?? 0) : `${format(d ?? 0)} of ${format(t)}`;
}

const count = (n: number) => n.toLocaleString("en");

function describeError(error: unknown): string {
  if (isObject(error) && typeof error.message === "string") {
    return error.message;
  }
  return typeof error === "string" ? error : JSON.stringify(error);
}

function restoreSummary(m: Json): string {
  const parts = [`restored ${plural(num(m.files_restored) ?? 0, "file")}`];
  const bytes = ofTotal(m.bytes_restored, m.total_bytes, formatBytes);
  if (bytes !== undefined) {
    parts[0] += `, ${bytes}`;
  }
  if (num(m.total_files) !== undefined) {
    parts.push(`${plural(num(m.total_files) ?? 0, "file")} in the selection`);
  }
  if ((num(m.files_skipped) ?? 0) > 0) {
    parts.push(
      `skipped ${plural(num(m.files_skipped) ?? 0, "file")} (${formatBytes(num(m.bytes_skipped) ?? 0)})`,
    );
  }
  if ((num(m.files_deleted) ?? 0) > 0) {
    parts.push(`deleted ${plural(num(m.files_deleted) ?? 0, "file")}`);
  }
  return parts.join("; ");
}

function backupSummary(m: Json): string {
  const id =
    typeof m.snapshot_id === "string" ? `snapshot ${m.snapshot_id.slice(0, 8)} saved` : "backup finished";
  const files = `${count(num(m.files_new) ?? 0)} new, ${count(num(m.files_changed) ?? 0)} changed, ${count(num(m.files_unmodified) ?? 0)} unmodified files`;
  return `${id}: ${files}; ${formatBytes(num(m.data_added) ?? 0)} added`;
}

function diffSide(side: unknown): string {
  if (!isObject(side)) {
    return "–";
  }
  return `${plural(num(side.files) ?? 0, "file")}, ${plural(num(side.dirs) ?? 0, "dir")}, ${formatBytes(num(side.bytes) ?? 0)}`;
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
function describeMessage(m: Json): string | undefined {
  switch (m.message_type) {
    case "verbose_status": {
      const action = typeof m.action === "string" ? m.action : "restored";
      const size = num(m.size);
      return `${action} ${String(m.item)}${size ? ` (${formatBytes(size)})` : ""}`;
    }
    case "status": {
      const parts = [percent(m.percent_done)];
      const filesDone = num(m.files_restored ?? m.files_done) ?? 0;
      const filesTotal = num(m.total_files);
      const files =
        filesTotal === undefined
          ? plural(filesDone, "file")
          : `${count(filesDone)} of ${plural(filesTotal, "file")}`;
      const bytes = ofTotal(m.bytes_restored ?? m.bytes_done, m.total_bytes, formatBytes);
      return [...parts, files, bytes].filter(Boolean).join(", ");
    }
    case "summary":
      return "files_restored" in m || "bytes_restored" in m ? restoreSummary(m) : backupSummary(m);
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
      return `error${during}${item}: ${describeError(m.error)}`;
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
function describeForget(groups: unknown[]): string | undefined {
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

export function renderLogLine(line: string): RenderedLogLine {
  const clean = stripTerminalCodes(line);
  const retry = RETRY_LINE.test(clean);
  const trimmed = clean.trimStart();
  let text: string | undefined;
  if (trimmed.startsWith("{") || trimmed.startsWith("[")) {
    try {
      const parsed: unknown = JSON.parse(trimmed);
      if (isObject(parsed)) {
        text = describeMessage(parsed);
      } else if (Array.isArray(parsed)) {
        text = describeForget(parsed);
      }
    } catch {
      // Not JSON after all (or cut at the agent's line cap): shown as it is.
    }
  }
  if (text === undefined) {
    // Control codes alone are noise, not something anyone needs to see "raw".
    return { text: clean, retry };
  }
  return { text, raw: line, retry };
}
