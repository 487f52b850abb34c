/**
 * @module tree/index-writer
 * Writes a snapshot's tree index from the stream of `restic ls --json <snapshot>` nodes, holding
 * only the chain of open directories in memory, never the listing:
 *
 * - `entries.jsonl`: one `[name, type, size, mtime]` line per node, in restic's order.
 * - `dirs.jsonl`: one `[dir path, [[offset, length], ...], in order]` line per directory, written
 *   when the directory is complete. restic walks depth-first in name order, so a directory's
 *   children sit in runs of lines interrupted by the subtrees of its child directories: at most
 *   one run more than it has child directories. A reader merges every line of a path, so the index
 *   stays right even if the order were different. `in order` (1 or 0; absent in indexes of older
 *   agents) says the children came in strictly ascending name order (tree-page.ts), so that a
 *   reader of one page may stop at its end instead of reading a huge directory to the last line.
 *
 * Writes are synchronous and batched (64 KiB): the node stream arrives in a synchronous callback,
 * and a bounded buffer is the point.
 */
import { closeSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import type { TreeEntry } from "@fleetback/protocol";
import { compareNames } from "./tree-page.js";
import { isBelow, parentOf } from "./tree-path.js";

export const ENTRIES_FILE = "entries.jsonl";
export const DIRS_FILE = "dirs.jsonl";
const BATCH_BYTES = 64 * 1024;

export type Run = [offset: number, length: number];
export type IndexLine = [name: string, type: TreeEntry["type"], size: number, mtime: string];

export type DirLine = [path: string, runs: Run[], inOrder?: 0 | 1];

interface OpenDir {
  path: string;
  runs: Run[];
  lastName?: string;
  inOrder: boolean;
}

interface BatchedFile {
  write(text: string): number;
  flush(): void;
  close(): void;
}

function batchedFile(path: string): BatchedFile {
  const fd = openSync(path, "wx", 0o600);
  let parts: string[] = [];
  let held = 0;
  const flush = () => {
    if (parts.length > 0) {
      writeSync(fd, parts.join(""));
      parts = [];
      held = 0;
    }
  };
  return {
    write(text) {
      const bytes = Buffer.byteLength(text);
      parts.push(text);
      held += bytes;
      if (held >= BATCH_BYTES) {
        flush();
      }
      return bytes;
    },
    flush,
    close() {
      try {
        flush();
      } finally {
        closeSync(fd);
      }
    },
  };
}

export interface IndexWriter {
  add(entry: TreeEntry): void;
  /** Bytes written so far (both files). */
  readonly bytes: number;
  readonly nodes: number;
  /**
   * Writes what is batched, so that a reader may use the directories closed so far while the
   * listing still streams (tree-browser.ts): their lines and runs are complete.
   */
  flush(): void;
  /** Writes the open directories and closes the files. */
  finish(): void;
  /** Closes the files without finishing; the caller removes the directory. */
  abandon(): void;
}

/** `onDirClosed` hears each directory whose children are all written (its subtree is behind). */
export function createIndexWriter(dir: string, onDirClosed?: (path: string) => void): IndexWriter {
  const entries = batchedFile(join(dir, ENTRIES_FILE));
  let dirs: BatchedFile;
  try {
    dirs = batchedFile(join(dir, DIRS_FILE));
  } catch (cause) {
    entries.close();
    throw cause;
  }
  const stack: OpenDir[] = [];
  let offset = 0;
  let dirBytes = 0;
  let nodes = 0;
  let lastParent: string | undefined;
  let closed = false;

  const close = (open: OpenDir) => {
    const line: DirLine = [open.path, open.runs, open.inOrder ? 1 : 0];
    dirBytes += dirs.write(`${JSON.stringify(line)}\n`);
    onDirClosed?.(open.path);
  };

  return {
    add(entry) {
      const parent = parentOf(entry.path);
      for (let top = stack.at(-1); top !== undefined; top = stack.at(-1)) {
        if (top.path === parent || isBelow(top.path, parent)) {
          break;
        }
        close(top);
        stack.pop();
      }
      let top = stack.at(-1);
      if (top === undefined || top.path !== parent) {
        top = { path: parent, runs: [], inOrder: true };
        stack.push(top);
      }
      if (top.lastName !== undefined && compareNames(top.lastName, entry.name) >= 0) {
        top.inOrder = false;
      }
      top.lastName = entry.name;
      const line: IndexLine = [entry.name, entry.type, entry.size, entry.mtime];
      const bytes = entries.write(`${JSON.stringify(line)}\n`);
      const last = top.runs.at(-1);
      if (lastParent === parent && last !== undefined) {
        last[1] += bytes;
      } else {
        top.runs.push([offset, bytes]);
      }
      offset += bytes;
      lastParent = parent;
      nodes += 1;
      if (entry.type === "dir") {
        stack.push({ path: entry.path, runs: [], inOrder: true });
      }
    },
    get bytes() {
      return offset + dirBytes;
    },
    get nodes() {
      return nodes;
    },
    flush() {
      if (!closed) {
        entries.flush();
        dirs.flush();
      }
    },
    finish() {
      for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
        close(top);
      }
      closed = true;
      entries.close();
      dirs.close();
    },
    abandon() {
      if (closed) {
        return;
      }
      closed = true;
      try {
        entries.close();
      } finally {
        dirs.close();
      }
    },
  };
}
