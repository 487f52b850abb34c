/**
 * @module tree/catalog-listing
 * Every path of a built tree index (index-writer.ts), for the file catalogue (catalog-sender.ts).
 * The index already holds the new snapshot's whole listing, so the catalogue costs no restic run.
 * `entries.jsonl` is read once, in file order: `dirs.jsonl` says which directory owns each byte
 * range, so a line's parent follows from its offset alone and no directory is sought out on its
 * own (index-reader.ts reads one directory; this reads them all). Held meanwhile: the runs of every
 * directory, a few numbers per directory and child directory.
 */
import { createReadStream } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { CatalogEntry } from "@fleetback/protocol";
import { type CatalogFiles, catalogued, versionOf } from "./catalog-delta.js";
import { entryOf } from "./index-reader.js";
import { DIRS_FILE, ENTRIES_FILE } from "./index-writer.js";

const NEWLINE = 10;

interface OwnedRun {
  start: number;
  end: number;
  dir: string;
}

/** Every run of every directory, in file order. */
async function ownedRuns(indexDir: string): Promise<OwnedRun[]> {
  const lines = createInterface({
    input: createReadStream(join(indexDir, DIRS_FILE), "utf8"),
    crlfDelay: Number.POSITIVE_INFINITY,
  });
  const runs: OwnedRun[] = [];
  for await (const line of lines) {
    if (line === "") {
      continue;
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
  return runs.sort((a, b) => a.start - b.start);
}

/**
 * Every entry of the index at `indexDir`, in the index's order, a read chunk's worth at a time (an
 * await per entry would cost more than reading it); throws on an unreadable index.
 */
export async function* indexEntries(indexDir: string): AsyncGenerator<CatalogEntry[]> {
  const runs = await ownedRuns(indexDir);
  let at = 0;
  let offset = 0;
  let rest = Buffer.alloc(0);
  // A newline byte never occurs inside a UTF-8 character, so lines are cut on bytes and decoded whole.
  for await (const chunk of createReadStream(join(indexDir, ENTRIES_FILE))) {
    const data = rest.length > 0 ? Buffer.concat([rest, chunk as Buffer]) : (chunk as Buffer);
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

/** The snapshot's files as the catalogue compares them: over-long paths left out. */
export async function catalogFiles(indexDir: string): Promise<CatalogFiles> {
  const files: CatalogFiles = new Map();
  for await (const batch of indexEntries(indexDir)) {
    for (const entry of batch) {
      if (catalogued(entry.path)) {
        files.set(entry.path, versionOf(entry));
      }
    }
  }
  return files;
}
