/**
 * @module tree/catalog-listing
 * Every path of a built tree index (index-writer.ts), for the file catalogue (catalog-sender.ts).
 * The index already holds the new snapshot's whole listing, so the catalogue costs no restic run.
 * `entries.jsonl` is read once, in file order: `dirs.jsonl` says which directory owns each byte
 * range, so a line's parent follows from its offset alone and no directory is sought out on its
 * own (index-reader.ts reads one directory; this reads them all). Held meanwhile: the runs of every
 * directory, a few numbers per directory and child directory.
 */
import { type FileHandle, open } from "node:fs/promises";
import { join } from "node:path";
import type { CatalogEntry } from "@fleetback/protocol";
import { type CatalogFiles, type CatalogLine, catalogued, versionOf } from "./catalog-delta.js";
import { fileChunks } from "./catalog-state.js";
import { entryOf } from "./index-reader.js";
import { DIRS_FILE, ENTRIES_FILE } from "./index-writer.js";

const NEWLINE = 10;
/** Pushes every whole line of `data` onto `lines`; what follows the last newline is returned. */
function cutLines(data: Buffer, lines: string[]): Buffer {
  let start = 0;
  for (let end = data.indexOf(NEWLINE); end !== -1; end = data.indexOf(NEWLINE, start)) {
    lines.push(data.toString("utf8", start, end));
    start = end + 1;
  }
  return Buffer.from(data.subarray(start));
}

interface OwnedRun {
  start: number;
  end: number;
  dir: string;
}

function addRuns(line: string, runs: OwnedRun[]): void {
  if (line === "") {
    return;
  }
  const parsed: unknown = JSON.parse(line);
  if (!Array.isArray(parsed) || typeof parsed[0] !== "string" || !Array.isArray(parsed[1])) {
    throw new Error("the tree index has a damaged directory line");
  }
  const dir = parsed[0];
  for (const run of parsed[1] as unknown[]) {
    if (Array.isArray(run) && typeof run[0] === "number" && typeof run[1] === "number") {
      runs.push({ start: run[0], end: run[0] + run[1], dir });
    }
  }
}

/** Every run of every directory, in file order. */
async function ownedRuns(dirs: FileHandle): Promise<OwnedRun[]> {
  const runs: OwnedRun[] = [];
  let rest: Buffer = Buffer.alloc(0);
  for await (const chunk of fileChunks(dirs)) {
    const lines: string[] = [];
    rest = cutLines(rest.length > 0 ? Buffer.concat([rest, chunk]) : chunk, lines);
    for (const line of lines) {
      addRuns(line, runs);
    }
  }
  addRuns(rest.toString("utf8"), runs);
  return runs.sort((a, b) => a.start - b.start);
}

/** The two files of an index, open: deleted meanwhile (an index evicted), they still read whole. */
interface IndexFiles {
  dirs: FileHandle;
  entries: FileHandle;
}

async function openIndex(indexDir: string): Promise<IndexFiles> {
  const dirs = await open(join(indexDir, DIRS_FILE));
  try {
    return { dirs, entries: await open(join(indexDir, ENTRIES_FILE)) };
  } catch (cause) {
    await dirs.close();
    throw cause;
  }
}

async function closeIndex(files: IndexFiles): Promise<void> {
  await Promise.allSettled([files.dirs.close(), files.entries.close()]);
}

/** Every entry of the open index, in its order, a read chunk's worth at a time. */
async function* entriesOf(files: IndexFiles): AsyncGenerator<CatalogEntry[]> {
  const runs = await ownedRuns(files.dirs);
  let at = 0;
  let offset = 0;
  let rest = Buffer.alloc(0);
  // A newline byte never occurs inside a UTF-8 character, so lines are cut on bytes and decoded whole.
  for await (const chunk of fileChunks(files.entries)) {
    const data = rest.length > 0 ? Buffer.concat([rest, chunk]) : chunk;
    const batch: CatalogEntry[] = [];
    let start = 0;
    for (let end = data.indexOf(NEWLINE); end !== -1; end = data.indexOf(NEWLINE, start)) {
      const lineAt = offset;
      offset += end - start + 1;
      for (let run = runs[at]; run !== undefined && run.end <= lineAt; run = runs[at]) {
        at += 1;
      }
      const owner = runs[at];
      if (owner !== undefined && owner.start <= lineAt && end > start) {
        const entry = entryOf(owner.dir, data.toString("utf8", start, end));
        if (entry !== undefined) {
          batch.push({ path: entry.path, type: entry.type, size: entry.size, mtime: entry.mtime });
        }
      }
      start = end + 1;
    }
    rest = Buffer.from(data.subarray(start));
    yield batch;
  }
  if (rest.length > 0) {
    throw new Error("the tree index ends inside a line");
  }
}

/**
 * Every entry of the index at `indexDir`, in the index's order, a read chunk's worth at a time (an
 * await per entry would cost more than reading it); throws on an unreadable index.
 */
export async function* indexEntries(indexDir: string): AsyncGenerator<CatalogEntry[]> {
  const files = await openIndex(indexDir);
  try {
    yield* entriesOf(files);
  } finally {
    await closeIndex(files);
  }
}

/** The snapshot's files as the catalogue compares them: over-long paths left out. */
function cataloguedLines(entries: readonly CatalogEntry[]): CatalogLine[] {
  const lines: CatalogLine[] = [];
  for (const entry of entries) {
    if (catalogued(entry.path)) {
      lines.push([entry.path, versionOf(entry)]);
    }
  }
  return lines;
}

/**
 * An index held open for the catalogue, which reads it more than once (catalog-sender.ts): each
 * `lines()` streams it from the start, `[path, version]` in the index's order (the order the
 * streaming merge needs, catalog-merge.ts), over-long paths left out. The files stay readable
 * until `close()`, even if the index is evicted or deleted meanwhile.
 */
export interface IndexListing {
  lines(): AsyncGenerator<CatalogLine[]>;
  close(): Promise<void>;
}

export async function openIndexListing(indexDir: string): Promise<IndexListing> {
  const files = await openIndex(indexDir);
  return {
    async *lines() {
      for await (const batch of entriesOf(files)) {
        yield cataloguedLines(batch);
      }
    },
    close: () => closeIndex(files),
  };
}

/** The snapshot's files, all held in one map: only for listings the streaming merge cannot use. */
export async function catalogFiles(
  lines: AsyncIterable<readonly CatalogLine[]> | string,
): Promise<CatalogFiles> {
  const files: CatalogFiles = new Map();
  const source = typeof lines === "string" ? catalogLines(lines) : lines;
  for await (const batch of source) {
    for (const [path, version] of batch) {
      files.set(path, version);
    }
  }
  return files;
}

/** `[path, version]` of the index at `indexDir`, as `IndexListing.lines` gives them, read once. */
async function* catalogLines(indexDir: string): AsyncGenerator<CatalogLine[]> {
  for await (const batch of indexEntries(indexDir)) {
    yield cataloguedLines(batch);
  }
}
