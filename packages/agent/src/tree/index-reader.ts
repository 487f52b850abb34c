/**
 * @module tree/index-reader
 * Reads one directory of a tree index (index-writer.ts): its runs from `dirs.jsonl` (a string
 * prefix test per line, no parse of the others), then one page of its children from
 * `entries.jsonl`, read in chunks so that a directory of a million children never sits in memory
 * whole.
 */
import { createReadStream } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { TreeEntry, TreeListResult } from "@fleetback/protocol";
import { seekRuns } from "./index-seek.js";
import { ENTRIES_FILE, type IndexLine, type Run } from "./index-writer.js";
import { entryType } from "./ls-output.js";
import { createTreePage } from "./tree-page.js";
import { childPath } from "./tree-path.js";

const READ_CHUNK_BYTES = 256 * 1024;

/** Where one directory's children lie in `entries.jsonl`, merged over every line of its path. */
export interface DirRuns {
  runs: Run[];
  /** The children are in name order: a page may stop at its end (tree-page.ts). */
  inOrder: boolean;
}

export async function runsOf(file: string, dir: string): Promise<DirRuns | undefined> {
  const prefix = `[${JSON.stringify(dir)},`;
  const lines = createInterface({
    input: createReadStream(file, "utf8"),
    crlfDelay: Number.POSITIVE_INFINITY,
  });
  let found: DirRuns | undefined;
  for await (const line of lines) {
    if (line.startsWith(prefix)) {
      const parsed: unknown = JSON.parse(line);
      const runs = Array.isArray(parsed) && Array.isArray(parsed[1]) ? (parsed[1] as unknown[]) : [];
      if (found === undefined) {
        found = { runs: [], inOrder: Array.isArray(parsed) && parsed[2] === 1 };
      } else {
        // Two lines for one path would mean restic left and re-entered it: no order to rely on.
        found.inOrder = false;
      }
      for (const run of runs) {
        if (Array.isArray(run) && typeof run[0] === "number" && typeof run[1] === "number") {
          found.runs.push([run[0], run[1]]);
        }
      }
    }
  }
  return found;
}

/** One `entries.jsonl` line as the child of `dir` it is (also read whole by catalog-listing.ts). */
export function entryOf(dir: string, line: string): TreeEntry | undefined {
  const parsed: unknown = JSON.parse(line);
  if (!Array.isArray(parsed) || typeof parsed[0] !== "string") {
    return undefined;
  }
  const [name, type, size, mtime] = parsed as IndexLine;
  return {
    name,
    path: childPath(dir, name),
    type: entryType(type),
    size: typeof size === "number" ? size : 0,
    mtime: typeof mtime === "string" ? mtime : "1970-01-01T00:00:00.000Z",
  };
}

/**
 * Hands the children of `dir` to `visit` in index order until it answers false. Runs are read in
 * chunks, so a directory of a million children never sits in memory whole.
 */
async function visitChildren(
  handle: FileHandle,
  dir: string,
  runs: readonly Run[],
  visit: (entry: TreeEntry) => boolean,
): Promise<void> {
  const chunk = Buffer.alloc(READ_CHUNK_BYTES);
  // A newline byte never occurs inside a UTF-8 character, so lines are cut on bytes and decoded whole.
  const visitLines = (data: Buffer, final: boolean): { stopped: boolean; rest: Buffer } => {
    let start = 0;
    for (let end = data.indexOf(10, start); ; end = data.indexOf(10, start)) {
      if (end === -1) {
        if (!final || start >= data.length) {
          break;
        }
        end = data.length;
      }
      const entry = end > start ? entryOf(dir, data.toString("utf8", start, end)) : undefined;
      start = end + 1;
      if (entry !== undefined && !visit(entry)) {
        return { stopped: true, rest: Buffer.alloc(0) };
      }
    }
    return { stopped: false, rest: Buffer.from(data.subarray(Math.min(start, data.length))) };
  };
  for (const [offset, length] of runs) {
    let rest: Buffer = Buffer.alloc(0);
    for (let done = 0; done < length; ) {
      const { bytesRead } = await handle.read(
        chunk,
        0,
        Math.min(READ_CHUNK_BYTES, length - done),
        offset + done,
      );
      if (bytesRead === 0) {
        throw new Error(`tree index ended ${length - done} bytes early`);
      }
      done += bytesRead;
      const read = chunk.subarray(0, bytesRead);
      const visited = visitLines(rest.length > 0 ? Buffer.concat([rest, read]) : read, done >= length);
      if (visited.stopped) {
        return;
      }
      rest = visited.rest;
    }
  }
}

async function withEntries<T>(indexDir: string, read: (handle: FileHandle) => Promise<T>): Promise<T> {
  const handle = await open(join(indexDir, ENTRIES_FILE), "r");
  try {
    return await read(handle);
  } finally {
    await handle.close();
  }
}

/**
 * One page of `dir`'s children after `after`. An in-order directory is read from just before the
 * cursor (index-seek.ts) to the page's end only; any other is read whole, a page kept in memory.
 */
export async function pageOf(
  indexDir: string,
  dir: string,
  found: DirRuns,
  after?: string,
): Promise<TreeListResult> {
  const page = createTreePage(after);
  await withEntries(indexDir, async (handle) => {
    const runs =
      found.inOrder && after !== undefined ? await seekRuns(handle, found.runs, after) : found.runs;
    await visitChildren(handle, dir, runs, (entry) => {
      page.add(entry);
      return !(found.inOrder && page.done);
    });
  });
  return page.result();
}

/** The child of `parent` at `path`, to tell "not a directory" from "no such path". */
export async function childOf(
  indexDir: string,
  parent: string,
  found: DirRuns,
  path: string,
): Promise<TreeEntry | undefined> {
  let self: TreeEntry | undefined;
  await withEntries(indexDir, (handle) =>
    visitChildren(handle, parent, found.runs, (entry) => {
      self = entry.path === path ? entry : undefined;
      return self === undefined;
    }),
  );
  return self;
}
