/**
 * @module testing/windows-fs
 * An in-memory FileOps that refuses what Windows refuses: a file that a running process holds
 * (`hold(path)`) can be neither renamed over, renamed away nor deleted (EBUSY). Enough to drive
 * the Windows platform layer on any host.
 */
import { createHash } from "node:crypto";
import { basename, dirname } from "node:path";
import type { FileOps } from "../update/file-ops.js";

export interface WindowsFs extends FileOps {
  readonly files: Map<string, Buffer>;
  /** A process runs this file now. */
  hold(path: string): void;
  release(path: string): void;
  put(path: string, content: string | Buffer): void;
}

function failure(code: string, syscall: string, path: string): Error {
  return Object.assign(new Error(`${code}: resource busy or locked, ${syscall} '${path}'`), {
    code,
    syscall,
    path,
  });
}

export function createWindowsFs(): WindowsFs {
  const files = new Map<string, Buffer>();
  const held = new Set<string>();
  const need = (path: string, syscall: string) => {
    const content = files.get(path);
    if (content === undefined) {
      throw failure("ENOENT", syscall, path);
    }
    return content;
  };
  return {
    files,
    hold: (path) => {
      held.add(path);
    },
    release: (path) => {
      held.delete(path);
    },
    put: (path, content) => {
      files.set(path, Buffer.from(content));
    },
    readText: async (path) => files.get(path)?.toString("utf8"),
    readBytes: async (path) => files.get(path),
    async writeAtomic(path, text) {
      if (held.has(path)) {
        throw failure("EPERM", "rename", path);
      }
      files.set(path, Buffer.from(text));
    },
    async rename(from, to) {
      const content = need(from, "rename");
      if (held.has(from) || held.has(to)) {
        throw failure("EBUSY", "rename", held.has(from) ? from : to);
      }
      files.delete(from);
      files.set(to, content);
    },
    async remove(path) {
      if (held.has(path)) {
        throw failure("EBUSY", "unlink", path);
      }
      files.delete(path);
    },
    list: async (dir) =>
      [...files.keys()].filter((path) => dirname(path) === dir).map((path) => basename(path)),
    chmod: async (path) => {
      need(path, "chmod");
    },
    sha256: async (path) => {
      const content = files.get(path);
      return content === undefined ? undefined : createHash("sha256").update(content).digest("hex");
    },
  };
}
