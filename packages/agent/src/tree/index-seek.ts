/**
 * @module tree/index-seek
 * Finds where a later page of a huge directory starts in `entries.jsonl` without reading what
 * comes before it: when the index says a directory's children are in name order (index-writer.ts),
 * its runs hold one ascending sequence, so a binary search over runs and then over byte offsets
 * (aligned to the next line) lands near the cursor in a few small reads. It only ever moves the
 * start to a line whose name is at or before the cursor, so the page that is read from there is
 * the same as from the top: this is a shortcut, never a different answer.
 */
import type { FileHandle } from "node:fs/promises";
import type { Run } from "./index-writer.js";
import { compareNames } from "./tree-page.js";

/** Below this the rest of a run is simply read: one or two chunks of the page reader. */
const LINEAR_BYTES = 64 * 1024;
/** An index line is a name (at most a few KiB) and three short fields. */
const MAX_LINE_BYTES = 64 * 1024;
const PROBE_BYTES = 4 * 1024;

const NEWLINE = 10;

/** The name of the index line that starts at `start`, or undefined when none ends before `end`. */
async function nameAt(handle: FileHandle, start: number, end: number): Promise<string | undefined> {
  for (let size = PROBE_BYTES; ; size *= 4) {
    const wanted = Math.min(size, MAX_LINE_BYTES, end - start);
    const buffer = Buffer.alloc(wanted);
    const { bytesRead } = await handle.read(buffer, 0, wanted, start);
    const newline = buffer.subarray(0, bytesRead).indexOf(NEWLINE);
    if (newline !== -1 || bytesRead === end - start) {
      const parsed: unknown = JSON.parse(buffer.toString("utf8", 0, newline === -1 ? bytesRead : newline));
      return Array.isArray(parsed) && typeof parsed[0] === "string" ? parsed[0] : undefined;
    }
    if (wanted >= MAX_LINE_BYTES || wanted === end - start) {
      return undefined;
    }
  }
}

/** The first line start at or after `from` (a position inside a run), before `end`. */
async function lineStartFrom(handle: FileHandle, from: number, end: number): Promise<number | undefined> {
  const wanted = Math.min(MAX_LINE_BYTES, end - from + 1);
  const buffer = Buffer.alloc(wanted);
  // From the byte before, so that `from` itself counts when a line ends just before it.
  const { bytesRead } = await handle.read(buffer, 0, wanted, from - 1);
  const newline = buffer.subarray(0, bytesRead).indexOf(NEWLINE);
  const start = newline === -1 ? undefined : from + newline;
  return start !== undefined && start < end ? start : undefined;
}

/**
 * The runs of an in-order directory from the last line whose name sorts at or before `after` on:
 * every line left out sorts at or before it. Runs must be in file order and non-empty.
 */
export async function seekRuns(handle: FileHandle, runs: readonly Run[], after: string): Promise<Run[]> {
  const atOrBefore = async (start: number, end: number) => {
    const name = await nameAt(handle, start, end);
    return name !== undefined && compareNames(name, after) <= 0;
  };
  // The last run whose first line is at or before the cursor; none means the page starts at the top.
  let low = 0;
  let high = runs.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    const [offset, length] = runs[middle] as Run;
    if (await atOrBefore(offset, offset + length)) {
      low = middle + 1;
    } else {
      high = middle;
    }
  }
  if (low === 0) {
    return [...runs];
  }
  const index = low - 1;
  const [offset, length] = runs[index] as Run;
  const end = offset + length;
  let start = offset;
  let bound = end;
  while (bound - start > LINEAR_BYTES) {
    const middle = start + Math.floor((bound - start) / 2);
    const next = await lineStartFrom(handle, middle, bound);
    if (next !== undefined && (await atOrBefore(next, end))) {
      start = next;
    } else {
      bound = middle;
    }
  }
  return [[start, end - start], ...runs.slice(index + 1)];
}
