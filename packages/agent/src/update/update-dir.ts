/**
 * @module update/update-dir
 * The update dir's files shared by both platforms: the boot record and the sweep of artefacts no
 * record names any more.
 */
import { join } from "node:path";
import {
  BOOT_RECORD_FILE,
  type BootRecord,
  readBootRecord,
  referencedFiles,
  writeBootRecord,
} from "./boot-record.js";
import type { FileOps } from "./file-ops.js";

export interface PlatformOptions {
  /** `<state>/update`. */
  dir: string;
  fs: FileOps;
}

/** Temp names of downloads in progress; a start finds only abandoned ones. */
export const DOWNLOAD_PREFIX = ".download-";

/** Shared by both platforms: the record at `boot.json`. */
export function recordStore(options: PlatformOptions) {
  const path = join(options.dir, BOOT_RECORD_FILE);
  return {
    path,
    read: () => readBootRecord(options.fs, path),
    write: (record: BootRecord) => writeBootRecord(options.fs, path, record),
  };
}

/**
 * Removes artefacts the record no longer names and abandoned downloads. Only with a record this
 * version could read: a newer format may name files that it does not know about. A file that refuses
 * (Windows: something still runs it) stays for the next start. Returns log notes.
 */
export async function removeUnreferenced(options: PlatformOptions, record: BootRecord | undefined) {
  const keep = referencedFiles(record);
  const notes: string[] = [];
  for (const name of await options.fs.list(options.dir)) {
    const stale = (name.startsWith("agent-") && !keep.has(name)) || name.startsWith(DOWNLOAD_PREFIX);
    if (!stale) {
      continue;
    }
    try {
      await options.fs.remove(join(options.dir, name));
    } catch (cause) {
      notes.push(`could not remove ${name} yet: ${String(cause)}`);
    }
  }
  return notes;
}
