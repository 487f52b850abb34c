/**
 * @module tree/index-store
 * The per-snapshot tree indexes under `<state dir>/tree-index/`. A build writes into
 * `<key>.building-<random>/` and renames it to `<key>/` only when restic's listing ended well, so
 * an index that exists is complete. Lookups stream `dirs.jsonl` (a string prefix test per line,
 * no parse of the others) and read only the byte runs of the asked directory from
 * `entries.jsonl`; nothing of the index stays in memory. Eviction: an index unused for `ttlMs`
 * goes, and the least recently used go first while the total exceeds `maxBytes`.
 */
import { randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdir, open, readdir, rename, rm, stat, utimes } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { TreeEntry, TreeListResult } from "@fleetback/protocol";
import type { Clock } from "../time/clock.js";
import {
  createEntryCollector,
  ENTRIES_BUDGET_BYTES,
  type EntryCollector,
  entriesResult,
  tooManyEntries,
} from "./direct-listing.js";
import { DIRS_FILE, ENTRIES_FILE, type IndexLine, type Run } from "./index-writer.js";
import { entryType } from "./ls-output.js";
import { childPath, parentOf } from "./tree-path.js";

export const DEFAULT_INDEX_TTL_MS = 60 * 60 * 1000;
export const DEFAULT_INDEX_MAX_BYTES = 512 * 1024 * 1024;
const BUILDING = ".building-";

export interface IndexStoreOptions {
  root: string;
  clock: Clock;
  ttlMs?: number;
  maxBytes?: number;
}

export interface IndexStore {
  readonly maxBytes: number;
  has(key: string): Promise<boolean>;
  /** The children of `dir` from the index, or undefined when there is no index for `key`. */
  lookup(key: string, dir: string): Promise<TreeListResult | undefined>;
  /** A fresh directory to build in; `commit` publishes it, `discard` removes it. */
  begin(key: string): Promise<{ dir: string; commit(): Promise<void>; discard(): Promise<void> }>;
  /** Removes expired indexes, then the least recently used while over the size limit. */
  sweep(activeBuildDirs: ReadonlySet<string>): Promise<void>;
}

async function runsOf(file: string, dir: string): Promise<Run[] | undefined> {
  const prefix = `[${JSON.stringify(dir)},`;
  const lines = createInterface({
    input: createReadStream(file, "utf8"),
    crlfDelay: Number.POSITIVE_INFINITY,
  });
  let runs: Run[] | undefined;
  for await (const line of lines) {
    if (line.startsWith(prefix)) {
      const parsed: unknown = JSON.parse(line);
      const found = Array.isArray(parsed) && Array.isArray(parsed[1]) ? (parsed[1] as unknown[]) : [];
      runs ??= [];
      for (const run of found) {
        if (Array.isArray(run) && typeof run[0] === "number" && typeof run[1] === "number") {
          runs.push([run[0], run[1]]);
        }
      }
    }
  }
  return runs;
}

function entryOf(dir: string, line: string): TreeEntry | undefined {
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

/** undefined when the runs are longer than any reply could be (an index line is shorter than its entry). */
async function childrenOf(indexDir: string, dir: string, runs: Run[]): Promise<EntryCollector | undefined> {
  const collector = createEntryCollector();
  if (runs.reduce((sum, [, length]) => sum + length, 0) > ENTRIES_BUDGET_BYTES) {
    return undefined;
  }
  const handle = await open(join(indexDir, ENTRIES_FILE), "r");
  try {
    for (const [offset, length] of runs) {
      const buffer = Buffer.alloc(length);
      await handle.read(buffer, 0, length, offset);
      for (const line of buffer.toString("utf8").split("\n")) {
        const entry = line === "" ? undefined : entryOf(dir, line);
        if (entry !== undefined) {
          collector.add(entry);
        }
      }
    }
  } finally {
    await handle.close();
  }
  return collector;
}

export function createIndexStore(options: IndexStoreOptions): IndexStore {
  const ttlMs = options.ttlMs ?? DEFAULT_INDEX_TTL_MS;
  const maxBytes = options.maxBytes ?? DEFAULT_INDEX_MAX_BYTES;
  const pathOf = (key: string) => join(options.root, key);

  const exists = async (key: string) => {
    try {
      return (await stat(pathOf(key))).isDirectory();
    } catch {
      return false;
    }
  };

  return {
    maxBytes,
    has: exists,
    async lookup(key, dir) {
      const indexDir = pathOf(key);
      if (!(await exists(key))) {
        return undefined;
      }
      const now = options.clock.now();
      await utimes(indexDir, now, now).catch(() => undefined);
      const runs = await runsOf(join(indexDir, DIRS_FILE), dir);
      if (runs !== undefined) {
        const children = await childrenOf(indexDir, dir, runs);
        return children === undefined ? tooManyEntries(dir) : entriesResult(dir, children);
      }
      if (dir === "/") {
        return { entries: [] };
      }
      // Not a directory of the snapshot: say whether it is something else or nothing at all.
      const parent = parentOf(dir);
      const parentRuns = await runsOf(join(indexDir, DIRS_FILE), parent);
      const siblings = parentRuns === undefined ? undefined : await childrenOf(indexDir, parent, parentRuns);
      const self = siblings?.entries.find((entry) => entry.path === dir);
      return self === undefined
        ? { error: `no such directory in the snapshot: ${dir}` }
        : { error: `not a directory: ${dir}` };
    },
    async begin(key) {
      await mkdir(options.root, { recursive: true, mode: 0o700 });
      const dir = join(options.root, `${key}${BUILDING}${randomBytes(6).toString("hex")}`);
      await mkdir(dir, { mode: 0o700 });
      return {
        dir,
        async commit() {
          await rm(pathOf(key), { recursive: true, force: true });
          await rename(dir, pathOf(key));
        },
        async discard() {
          await rm(dir, { recursive: true, force: true });
        },
      };
    },
    async sweep(activeBuildDirs) {
      let names: string[];
      try {
        names = await readdir(options.root);
      } catch {
        return;
      }
      const now = options.clock.now().getTime();
      const live: { path: string; usedAt: number; bytes: number }[] = [];
      for (const name of names) {
        const path = join(options.root, name);
        if (name.includes(BUILDING)) {
          if (!activeBuildDirs.has(path)) {
            await rm(path, { recursive: true, force: true });
          }
          continue;
        }
        try {
          const info = await stat(path);
          if (now - info.mtimeMs > ttlMs) {
            await rm(path, { recursive: true, force: true });
            continue;
          }
          const sizes = await Promise.all(
            [ENTRIES_FILE, DIRS_FILE].map((file) =>
              stat(join(path, file)).then(
                (s) => s.size,
                () => 0,
              ),
            ),
          );
          live.push({ path, usedAt: info.mtimeMs, bytes: sizes.reduce((sum, size) => sum + size, 0) });
        } catch {
          // Removed meanwhile.
        }
      }
      let total = live.reduce((sum, index) => sum + index.bytes, 0);
      live.sort((a, b) => a.usedAt - b.usedAt);
      for (const index of live) {
        if (total <= maxBytes) {
          break;
        }
        await rm(index.path, { recursive: true, force: true });
        total -= index.bytes;
      }
    },
  };
}
