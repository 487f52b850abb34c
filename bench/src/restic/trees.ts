/**
 * @module restic/trees
 * The generated source trees of B1 and B4, made once under .cache/bench and reused by later runs
 * (a marker file beside it names what was made, so a changed shape is made again). File contents are random
 * bytes: restic's compression and deduplication get nothing for free, as with real data.
 */
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { repoRoot } from "./tools.js";

export interface TreeShape {
  name: string;
  /** Folders under the root, each with `subfolders` folders of `files` files. */
  folders: number;
  subfolders: number;
  files: number;
  /** The size of file number i (0-based, across the tree). */
  sizeOf(i: number): number;
}

export interface Tree {
  root: string;
  files: number;
  bytes: number;
}

/** B1: 20,000 files, ~400 MB: sizes from 1 KiB to ~38 KiB, 20 KB on average. */
export const BACKUP_TREE: TreeShape = {
  name: "b1-20000-files",
  folders: 20,
  subfolders: 10,
  files: 100,
  sizeOf: (i) => 1024 + ((i * 7919) % 37_000),
};

/** B4: 200,000 small files in 20 × 100 folders of 100. */
export const BROWSE_TREE: TreeShape = {
  name: "b4-200000-files",
  folders: 20,
  subfolders: 100,
  files: 100,
  sizeOf: (i) => 16 + (i % 48),
};

export async function ensureTree(shape: TreeShape): Promise<Tree> {
  const root = join(repoRoot, ".cache", "bench", shape.name);
  const marker = join(repoRoot, ".cache", "bench", `${shape.name}.made`);
  const count = shape.folders * shape.subfolders * shape.files;
  let bytes = 0;
  for (let i = 0; i < count; i++) {
    bytes += shape.sizeOf(i);
  }
  const description = JSON.stringify({ count, bytes });
  if (existsSync(marker) && (await readFile(marker, "utf8")) === description) {
    return { root, files: count, bytes };
  }
  await rm(root, { recursive: true, force: true });
  let i = 0;
  for (let f = 0; f < shape.folders; f++) {
    for (let s = 0; s < shape.subfolders; s++) {
      const dir = join(root, `f${String(f).padStart(3, "0")}`, `s${String(s).padStart(3, "0")}`);
      await mkdir(dir, { recursive: true });
      const writes: Promise<void>[] = [];
      for (let n = 0; n < shape.files; n++, i++) {
        writes.push(
          writeFile(join(dir, `file-${String(n).padStart(4, "0")}.bin`), randomBytes(shape.sizeOf(i))),
        );
      }
      await Promise.all(writes);
    }
  }
  await writeFile(marker, description);
  return { root, files: count, bytes };
}
