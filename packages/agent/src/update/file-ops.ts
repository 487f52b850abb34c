/**
 * @module update/file-ops
 * The file operations the updater and launcher need, as a port: the node adapter does the real
 * thing, and tests pass a file system that refuses what Windows refuses (replacing or deleting a
 * file that a running process holds), so the Windows path is exercised on any host.
 */
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { chmod, readdir, readFile, rename, rm } from "node:fs/promises";
import { writeFileAtomic } from "../config/atomic-write.js";

export interface FileOps {
  /** The file's text, or undefined when it does not exist. */
  readText(path: string): Promise<string | undefined>;
  /** Temp file + fsync + rename: readers see the old or the new content, never half. */
  writeAtomic(path: string, text: string): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  /** Removing what does not exist is fine; a file in use may refuse (Windows). */
  remove(path: string): Promise<void>;
  /** Names in the directory; none when it does not exist. */
  list(dir: string): Promise<string[]>;
  chmod(path: string, mode: number): Promise<void>;
  /** Lowercase hex SHA-256 of the file, or undefined when it does not exist. */
  sha256(path: string): Promise<string | undefined>;
  /** The file's bytes, or undefined when it does not exist (the launcher verifies what it read). */
  readBytes(path: string): Promise<Buffer | undefined>;
}

export function errorCode(cause: unknown): string | undefined {
  return cause instanceof Error && "code" in cause && typeof cause.code === "string" ? cause.code : undefined;
}

/** What Windows answers when a file is held open by a running process. */
export function isInUse(cause: unknown): boolean {
  const code = errorCode(cause);
  return code === "EBUSY" || code === "EPERM" || code === "EACCES";
}

export const nodeFileOps: FileOps = {
  async readText(path) {
    try {
      return await readFile(path, "utf8");
    } catch (cause) {
      if (errorCode(cause) === "ENOENT") {
        return undefined;
      }
      throw cause;
    }
  },
  async readBytes(path) {
    try {
      return await readFile(path);
    } catch (cause) {
      if (errorCode(cause) === "ENOENT") {
        return undefined;
      }
      throw cause;
    }
  },
  writeAtomic: (path, text) => writeFileAtomic(path, text, 0o600),
  rename: (from, to) => rename(from, to),
  remove: (path) => rm(path, { force: true }),
  async list(dir) {
    try {
      return await readdir(dir);
    } catch (cause) {
      if (errorCode(cause) === "ENOENT") {
        return [];
      }
      throw cause;
    }
  },
  chmod: (path, mode) => chmod(path, mode),
  sha256: (path) =>
    new Promise((resolve, reject) => {
      const hash = createHash("sha256");
      createReadStream(path)
        .on("data", (chunk) => hash.update(chunk))
        .on("end", () => resolve(hash.digest("hex")))
        .on("error", (cause) => (errorCode(cause) === "ENOENT" ? resolve(undefined) : reject(cause)));
    }),
};
