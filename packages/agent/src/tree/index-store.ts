/**
 * @module tree/index-store
 * The per-snapshot tree indexes under `<state dir>/tree-index/`. A build writes into
 * `<key>.building-<random>/` and renames it to `<key>/` only when restic's listing ended well, so
 * an index that exists is complete. Lookups (index-reader.ts) stream `dirs.jsonl` and read one
 * page of the asked directory from `entries.jsonl`; nothing of the index stays in memory.
 * Eviction: an index unused for `ttlMs` goes, and the least recently used go first while the
 * total exceeds `maxBytes`; except the pinned one (`pinned` names its key), the index an agent
 * builds after a backup so that its newest snapshot browses at once hours later.
 */
import { randomBytes } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { TreeListResult } from "@fleetback/protocol";
import type { Clock } from "../time/clock.js";
import { childOf, pageOf, runsOf } from "./index-reader.js";
import { DIRS_FILE, ENTRIES_FILE } from "./index-writer.js";
import { parentOf } from "./tree-path.js";

export const DEFAULT_INDEX_TTL_MS = 60 * 60 * 1000;
export const DEFAULT_INDEX_MAX_BYTES = 512 * 1024 * 1024;
const BUILDING = ".building-";
const PINNED_FILE = "pinned";

export interface IndexStoreOptions {
  root: string;
  clock: Clock;
  ttlMs?: number;
  maxBytes?: number;
}

export interface IndexStore {
  readonly maxBytes: number;
  has(key: string): Promise<boolean>;
  /** Where `key`'s index lies once committed. */
  dirOf(key: string): string;
  /**
   * One page of the children of `dir` (those after `after`) from the index, or undefined when
   * there is no index for `key`.
   */
  lookup(key: string, dir: string, after?: string): Promise<TreeListResult | undefined>;
  /** A fresh directory to build in; `commit` publishes it, `discard` removes it. */
  begin(key: string): Promise<{ dir: string; commit(): Promise<void>; discard(): Promise<void> }>;
  /** Keeps `key`'s index through every sweep, until another key is pinned. */
  pin(key: string): Promise<void>;
  /** Removes expired indexes, then the least recently used while over the size limit. */
  sweep(activeBuildDirs: ReadonlySet<string>): Promise<void>;
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
    dirOf: pathOf,
    async lookup(key, dir, after) {
      const indexDir = pathOf(key);
      if (!(await exists(key))) {
        return undefined;
      }
      const now = options.clock.now();
      await utimes(indexDir, now, now).catch(() => undefined);
      const found = await runsOf(join(indexDir, DIRS_FILE), dir);
      if (found !== undefined) {
        return pageOf(indexDir, dir, found, after);
      }
      if (dir === "/") {
        return { entries: [] };
      }
      // Not a directory of the snapshot: say whether it is something else or nothing at all.
      const parent = parentOf(dir);
      const siblings = await runsOf(join(indexDir, DIRS_FILE), parent);
      const self = siblings === undefined ? undefined : await childOf(indexDir, parent, siblings, dir);
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
    async pin(key) {
      const temporary = join(options.root, `${PINNED_FILE}${BUILDING}${randomBytes(6).toString("hex")}`);
      await writeFile(temporary, key, { mode: 0o600 });
      await rename(temporary, join(options.root, PINNED_FILE));
    },
    async sweep(activeBuildDirs) {
      let names: string[];
      try {
        names = await readdir(options.root);
      } catch {
        return;
      }
      const pinned = await readFile(join(options.root, PINNED_FILE), "utf8").catch(() => undefined);
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
        if (name === PINNED_FILE) {
          continue;
        }
        try {
          const info = await stat(path);
          if (name !== pinned && now - info.mtimeMs > ttlMs) {
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
          // The pinned index counts towards the limit but is never the one evicted.
          const usedAt = name === pinned ? Number.POSITIVE_INFINITY : info.mtimeMs;
          live.push({ path, usedAt, bytes: sizes.reduce((sum, size) => sum + size, 0) });
        } catch {
          // Removed meanwhile.
        }
      }
      let total = live.reduce((sum, index) => sum + index.bytes, 0);
      live.sort((a, b) => a.usedAt - b.usedAt);
      for (const index of live) {
        if (total <= maxBytes || index.usedAt === Number.POSITIVE_INFINITY) {
          break;
        }
        await rm(index.path, { recursive: true, force: true });
        total -= index.bytes;
      }
    },
  };
}
