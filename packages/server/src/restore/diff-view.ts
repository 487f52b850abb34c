/**
 * @module restore/diff-view
 * Turns a diff job's stored stdout lines into the job page's table and summary. Two shapes exist
 * (recorded in testdata/restic as `diff` and `diff-text`): `diff --json` JSON lines (`change` with a
 * path and a modifier, then one `statistics`), and the text output (`+    /path` lines, then a
 * `Files: … new, … removed, … changed` block). restic prints no per-file size, only the totals of
 * the statistics. Lines of neither shape are kept and shown raw.
 */
import { type Database, jobLogs } from "@fleetback/db";
import { formatBytes } from "@fleetback/web";
import { and, asc, eq } from "drizzle-orm";

/** Lines read for the table; a larger diff says so and points at the full log. */
export const DIFF_LINES_MAX = 5_000;

export type DiffChange = "added" | "removed" | "modified" | "type changed" | "metadata" | "changed";

export interface DiffRow {
  path: string;
  modifier: string;
  change: DiffChange;
  isDir: boolean;
}

export interface DiffView {
  rows: DiffRow[];
  counts: Record<"added" | "removed" | "modified" | "other", number>;
  /** From the statistics message or the text block; empty when the tool printed none (yet). */
  summary: Array<{ label: string; value: string }>;
  raw: string[];
  truncated: boolean;
}

const TEXT_CHANGE = /^([+\-MTU?]{1,4})\s+(\/.*)$/;
const TEXT_COUNTS = /^(Files|Dirs|Others|Data Blobs|Tree Blobs):\s+(.*)$/;
const TEXT_BYTES = /^(Added|Removed):\s+(.*)$/;
const TEXT_HEADER = /^comparing snapshot (\S+) to (\S+):$/;

function changeOf(modifier: string): DiffChange {
  if (modifier.includes("+")) {
    return "added";
  }
  if (modifier.includes("-")) {
    return "removed";
  }
  if (modifier.includes("M")) {
    return "modified";
  }
  if (modifier.includes("T")) {
    return "type changed";
  }
  if (modifier.includes("U")) {
    return "metadata";
  }
  return "changed";
}

function row(path: string, modifier: string): DiffRow {
  return { path, modifier, change: changeOf(modifier), isDir: path.endsWith("/") };
}

interface Side {
  files?: unknown;
  dirs?: unknown;
  others?: unknown;
  bytes?: unknown;
}

const count = (value: unknown) => (typeof value === "number" ? String(value) : "–");

function statisticsSummary(stats: Record<string, unknown>): Array<{ label: string; value: string }> {
  const added = (stats.added ?? {}) as Side;
  const removed = (stats.removed ?? {}) as Side;
  const summary = [
    {
      label: "Files",
      value: `${count(added.files)} new, ${count(removed.files)} removed, ${count(stats.changed_files)} changed`,
    },
    { label: "Dirs", value: `${count(added.dirs)} new, ${count(removed.dirs)} removed` },
    { label: "Others", value: `${count(added.others)} new, ${count(removed.others)} removed` },
    { label: "Added", value: typeof added.bytes === "number" ? formatBytes(added.bytes) : "–" },
    { label: "Removed", value: typeof removed.bytes === "number" ? formatBytes(removed.bytes) : "–" },
  ];
  if (typeof stats.source_snapshot === "string" && typeof stats.target_snapshot === "string") {
    summary.unshift({ label: "Compared", value: `${stats.source_snapshot} → ${stats.target_snapshot}` });
  }
  return summary;
}

/** Parses lines in order; JSON and text may not mix in one run, but nothing here relies on that. */
export function parseDiffLines(lines: readonly string[]): Omit<DiffView, "truncated"> {
  const rows: DiffRow[] = [];
  const raw: string[] = [];
  let summary: Array<{ label: string; value: string }> = [];
  const textSummary: Array<{ label: string; value: string }> = [];
  for (const line of lines) {
    const trimmed = line.trim();
    if (trimmed === "") {
      continue;
    }
    if (trimmed.startsWith("{")) {
      let message: Record<string, unknown> | undefined;
      try {
        const parsed: unknown = JSON.parse(trimmed);
        message =
          typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>) : undefined;
      } catch {
        message = undefined;
      }
      if (
        message?.message_type === "change" &&
        typeof message.path === "string" &&
        typeof message.modifier === "string"
      ) {
        rows.push(row(message.path, message.modifier));
        continue;
      }
      if (message?.message_type === "statistics") {
        summary = statisticsSummary(message);
        continue;
      }
      raw.push(line);
      continue;
    }
    const change = TEXT_CHANGE.exec(line);
    if (change?.[1] && change[2]) {
      rows.push(row(change[2], change[1]));
      continue;
    }
    const header = TEXT_HEADER.exec(trimmed);
    if (header?.[1] && header[2]) {
      textSummary.push({ label: "Compared", value: `${header[1]} → ${header[2]}` });
      continue;
    }
    const counted = TEXT_COUNTS.exec(trimmed) ?? TEXT_BYTES.exec(trimmed);
    if (counted?.[1] && counted[2] !== undefined) {
      textSummary.push({ label: counted[1], value: counted[2].replace(/\s+/g, " ").trim() });
      continue;
    }
    raw.push(line);
  }
  const counts = { added: 0, removed: 0, modified: 0, other: 0 };
  for (const { change } of rows) {
    if (change === "added" || change === "removed" || change === "modified") {
      counts[change] += 1;
    } else {
      counts.other += 1;
    }
  }
  return { rows, counts, summary: summary.length > 0 ? summary : textSummary, raw };
}

/** The diff of a job from its stored stdout lines (the first DIFF_LINES_MAX of them). */
export async function loadDiffView(db: Database, jobId: string): Promise<DiffView> {
  const stored = await db
    .select({ line: jobLogs.line })
    .from(jobLogs)
    .where(and(eq(jobLogs.jobId, jobId), eq(jobLogs.stream, "stdout")))
    .orderBy(asc(jobLogs.seq))
    .limit(DIFF_LINES_MAX + 1);
  const truncated = stored.length > DIFF_LINES_MAX;
  const parsed = parseDiffLines(stored.slice(0, DIFF_LINES_MAX).map((entry) => entry.line));
  return { ...parsed, truncated };
}
