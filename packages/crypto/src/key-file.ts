/**
 * @module The server's master key file (`<data dir>/secret.key`). Losing or replacing it makes
 * every sealed secret unreadable, so it is created exactly once and never written again:
 * the key goes to a private temp file first and is published with `link()`, which is atomic and
 * fails with EEXIST when another process got there first. Readers therefore never see a partly
 * written key, and racing processes all end up with the winner's bytes.
 */
import { randomUUID } from "node:crypto";
import { constants } from "node:fs";
import { type FileHandle, link, mkdir, open, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { type RandomBytes, systemRandom } from "./random.js";

export const KEY_FILE_BYTES = 32;

export type KeyFileProblem = "wrong_size" | "not_a_regular_file" | "unreadable" | "uncreatable";

/** Thrown when the key file cannot be used; the message names the file and says what to do. */
export class KeyFileError extends Error {
  override readonly name = "KeyFileError";
  constructor(
    readonly problem: KeyFileProblem,
    readonly path: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export interface LoadedKey {
  key: Uint8Array;
  /** True only in the one process whose file won the creation race. */
  created: boolean;
  /** Problems that do not stop startup (a mode looser than 0600); the caller logs them. */
  warnings: string[];
}

export interface LoadOrCreateKeyOptions {
  random?: RandomBytes;
  /** What replacing the file costs, for the refusal message (default: existing secrets unreadable). */
  replacing?: string;
}

const DEFAULT_REPLACING = "makes existing secrets unreadable";

function consequence(replacing: string): string {
  return `refusing to start (restore the original file or move it away to generate a new one, which ${replacing})`;
}

/**
 * Loads the key, creating it (and a 0700 parent directory) when absent. Throws KeyFileError when
 * the file exists but is unusable; an existing file is never modified, whatever its state.
 */
export async function loadOrCreateKey(
  path: string,
  options: LoadOrCreateKeyOptions = {},
): Promise<LoadedKey> {
  const refusal = consequence(options.replacing ?? DEFAULT_REPLACING);
  const existing = await readKeyFile(path, refusal);
  if (existing) {
    return { ...existing, created: false };
  }
  const created = await publishNewKey(path, options.random ?? systemRandom);
  const loaded = await readKeyFile(path, refusal);
  if (!loaded) {
    // link() said the name exists yet open() cannot find it: a dangling symlink, most likely.
    throw new KeyFileError(
      "unreadable",
      path,
      `key file ${path} exists but cannot be opened (dangling symlink?) — ${refusal}`,
    );
  }
  return { ...loaded, created };
}

/** Returns undefined when there is no file yet; throws KeyFileError when there is an unusable one. */
async function readKeyFile(path: string, refusal: string): Promise<Omit<LoadedKey, "created"> | undefined> {
  let handle: FileHandle;
  try {
    // O_NONBLOCK keeps a FIFO planted at the path from hanging startup; regular files ignore it.
    handle = await open(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    if (errorCode(error) === "ENOENT") {
      return undefined;
    }
    throw new KeyFileError("unreadable", path, `cannot open key file ${path}: ${describe(error)}`, {
      cause: error,
    });
  }
  try {
    // fstat on the open handle, so the checks describe the very file that is read.
    const stats = await handle.stat();
    if (!stats.isFile()) {
      throw new KeyFileError(
        "not_a_regular_file",
        path,
        `key file ${path} is not a regular file — ${refusal}`,
      );
    }
    if (stats.size !== KEY_FILE_BYTES) {
      throw wrongSize(path, stats.size, refusal);
    }
    const key = new Uint8Array(KEY_FILE_BYTES + 1);
    const { bytesRead } = await handle.read(key, 0, key.length, 0);
    if (bytesRead !== KEY_FILE_BYTES) {
      throw wrongSize(path, bytesRead, refusal);
    }
    return { key: key.slice(0, KEY_FILE_BYTES), warnings: modeWarnings(path, stats.mode) };
  } catch (error) {
    if (error instanceof KeyFileError) {
      throw error;
    }
    throw new KeyFileError("unreadable", path, `cannot read key file ${path}: ${describe(error)}`, {
      cause: error,
    });
  } finally {
    await handle.close();
  }
}

/** Returns whether this call's file became the key file (false: another writer won the race). */
async function publishNewKey(path: string, random: RandomBytes): Promise<boolean> {
  const directory = dirname(path);
  const temp = join(directory, `.${basename(path)}.${process.pid}.${randomUUID()}.tmp`);
  try {
    await mkdir(directory, { recursive: true, mode: 0o700 });
    const key = random(KEY_FILE_BYTES);
    if (key.length !== KEY_FILE_BYTES) {
      throw new RangeError(`random source returned ${key.length} bytes; expected ${KEY_FILE_BYTES}`);
    }
    const handle = await open(temp, "wx", 0o600);
    try {
      await handle.writeFile(key);
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await link(temp, path);
    } catch (error) {
      if (errorCode(error) === "EEXIST") {
        return false;
      }
      throw error;
    }
    await syncDirectory(directory);
    return true;
  } catch (error) {
    throw new KeyFileError("uncreatable", path, `cannot create key file ${path}: ${describe(error)}`, {
      cause: error,
    });
  } finally {
    await unlink(temp).catch(() => undefined);
  }
}

/** Makes the new directory entry durable; some platforms cannot open directories, which is fine. */
async function syncDirectory(directory: string): Promise<void> {
  try {
    const handle = await open(directory, constants.O_RDONLY);
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Best effort only.
  }
}

function modeWarnings(path: string, mode: number): string[] {
  if (process.platform === "win32" || (mode & 0o077) === 0) {
    return [];
  }
  const octal = (mode & 0o777).toString(8).padStart(4, "0");
  return [`key file ${path} has mode ${octal}; expected 0600 (run: chmod 600 ${path})`];
}

function wrongSize(path: string, size: number, refusal: string): KeyFileError {
  return new KeyFileError(
    "wrong_size",
    path,
    `key file ${path} has ${size} bytes; expected ${KEY_FILE_BYTES} — ${refusal}`,
  );
}

function errorCode(error: unknown): string | undefined {
  return error instanceof Error && "code" in error && typeof error.code === "string" ? error.code : undefined;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
