/**
 * @module tree/catalog-state
 * The file catalogue's base per repository and source group: the files of the last snapshot of
 * the group the server acknowledged `applied`, in `<state dir>/catalog/<sha256 of repository URL
 * and tag>` (0600; written whole to a temporary file and renamed, so a crash leaves the old base
 * or the new one). The name hashes the URL, which may carry credentials, so that no file name
 * holds it in clear. Line 1 is the header `{"snapshot_id","time","tag"}`, then one
 * `[path, "type\tsize\tmtime"]` line per path. A file that does not read back whole is no base at
 * all: a diff against half a base would tell the server that files vanished which never did,
 * where the full resend a missing base costs is only slower. The header alone (`readCatalogHeader`)
 * is what the catch-up (catalog-catch-up.ts) needs to plan: which snapshot a group's base is, and
 * which groups of a repository have one (`listCatalogBases`: a file whose header's tag hashes
 * with the repository's URL to its own name), without holding every path of every group.
 */
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { type FileHandle, open, readdir } from "node:fs/promises";
import { basename, join } from "node:path";
import { createInterface } from "node:readline";
import { RFC3339_UTC_PATTERN, SNAPSHOT_ID_PATTERN } from "@fleetback/protocol";
import { writeFileAtomic } from "../config/atomic-write.js";
import { type CatalogFiles, type CatalogLine, entryOfVersion } from "./catalog-delta.js";

/** Lines are written in batches of about this many bytes. */
const WRITE_BATCH_BYTES = 64 * 1024;
const ID = new RegExp(SNAPSHOT_ID_PATTERN);
const TIME = new RegExp(RFC3339_UTC_PATTERN);

export interface CatalogBase {
  snapshot_id: string;
  time: string;
  tag: string;
  files: CatalogFiles;
}

/** A base without its paths: which snapshot of which group it is. */
export type CatalogBaseHeader = Omit<CatalogBase, "files">;

export type CatalogBaseRead =
  | { kind: "none" }
  | { kind: "corrupt"; reason: string }
  | { kind: "base"; base: CatalogBase };

function catalogDir(stateDir: string): string {
  return join(stateDir, "catalog");
}

export function catalogStateFile(stateDir: string, repositoryUrl: string, tag: string): string {
  const key = createHash("sha256").update(`${repositoryUrl}\n${tag}`).digest("hex");
  return join(catalogDir(stateDir), key);
}

class DamagedState extends Error {}

/** `tag` undefined: any group's header (listing the bases). */
function parseHeader(line: string, tag: string | undefined): CatalogBaseHeader {
  const parsed: unknown = JSON.parse(line);
  if (typeof parsed !== "object" || parsed === null) {
    throw new DamagedState("the header is not an object");
  }
  const { snapshot_id, time, tag: stored } = parsed as Record<string, unknown>;
  if (typeof snapshot_id !== "string" || !ID.test(snapshot_id)) {
    throw new DamagedState("the header has no snapshot id");
  }
  if (typeof time !== "string" || !TIME.test(time)) {
    throw new DamagedState("the header has no time");
  }
  if (typeof stored !== "string" || stored === "" || (tag !== undefined && stored !== tag)) {
    throw new DamagedState("the header names another source group");
  }
  return { snapshot_id, time, tag: stored };
}

function parseFileLine(line: string): CatalogLine {
  const parsed: unknown = JSON.parse(line);
  if (!Array.isArray(parsed) || typeof parsed[0] !== "string" || typeof parsed[1] !== "string") {
    throw new DamagedState("a path line is not [path, version]");
  }
  const [path, version] = parsed as [string, string];
  if (!path.startsWith("/") || entryOfVersion(path, version) === undefined) {
    throw new DamagedState("a path line holds no path or version");
  }
  return [path, version];
}

const NEWLINE = 10;

const READ_CHUNK_BYTES = 64 * 1024;

/**
 * The bytes of `handle` from the start, a chunk at a time, in one buffer reused for every chunk:
 * a chunk is only valid until the next is asked for. A buffer per chunk would be external memory
 * that a pass allocating little on the heap frees only when V8 sees fit, tens of MB later. Read at
 * positions, so the handle may be read again from the start.
 */
export async function* fileChunks(handle: FileHandle): AsyncGenerator<Buffer> {
  const buffer = Buffer.allocUnsafe(READ_CHUNK_BYTES);
  let position = 0;
  for (;;) {
    const { bytesRead } = await handle.read(buffer, 0, READ_CHUNK_BYTES, position);
    if (bytesRead === 0) {
      return;
    }
    position += bytesRead;
    yield buffer.subarray(0, bytesRead);
  }
}

/**
 * The path lines of `file` (every line after the header), a read chunk's worth at a time: an
 * await per line would cost more than parsing it, and a chunk is a short turn of the event loop.
 * Throws on a line that is not a path line.
 */
async function* pathLines(file: string): AsyncGenerator<CatalogLine[]> {
  const handle = await open(file);
  try {
    let header = true;
    let rest = Buffer.alloc(0);
    // A newline byte never occurs inside a UTF-8 character, so lines are cut on bytes and decoded whole.
    for await (const chunk of fileChunks(handle)) {
      const data = rest.length > 0 ? Buffer.concat([rest, chunk]) : chunk;
      const batch: CatalogLine[] = [];
      let start = 0;
      for (let end = data.indexOf(NEWLINE); end !== -1; end = data.indexOf(NEWLINE, start)) {
        if (header) {
          header = false;
        } else if (end > start) {
          batch.push(parseFileLine(data.toString("utf8", start, end)));
        }
        start = end + 1;
      }
      rest = Buffer.from(data.subarray(start));
      yield batch;
    }
    if (rest.length > 0 && !header) {
      // A last line without its newline: a whole one passes, half of one fails to parse.
      yield [parseFileLine(rest.toString("utf8"))];
    }
  } finally {
    await handle.close();
  }
}

/**
 * A base opened for reading: its header, and its paths to stream (in the order they were written),
 * as often as needed, never all held at once (catalog-merge.ts). `paths()` throws on a damaged line.
 */
export type CatalogBaseOpen =
  | { kind: "none" }
  | { kind: "corrupt"; reason: string }
  | { kind: "base"; header: CatalogBaseHeader; paths(): AsyncGenerator<CatalogLine[]> };

function reasonOf(cause: unknown): string {
  return cause instanceof Error ? cause.message : String(cause);
}

/** The base of `tag` in `file`, by its header alone; never throws. */
export async function openCatalogBase(file: string, tag: string): Promise<CatalogBaseOpen> {
  try {
    const line = await firstLine(file);
    if (line === undefined) {
      return { kind: "corrupt", reason: "it is empty" };
    }
    const header = parseHeader(line, tag);
    return { kind: "base", header, paths: () => pathLines(file) };
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === "ENOENT") {
      return { kind: "none" };
    }
    return { kind: "corrupt", reason: reasonOf(cause) };
  }
}

/**
 * The base of `tag` in `file`, every path in a map; missing or unreadable, none. Never throws.
 * Only for bases whose order the streaming merge cannot use (catalog-sender.ts).
 */
export async function readCatalogBase(file: string, tag: string): Promise<CatalogBaseRead> {
  const opened = await openCatalogBase(file, tag);
  if (opened.kind !== "base") {
    return opened;
  }
  try {
    const files: CatalogFiles = new Map();
    for await (const batch of opened.paths()) {
      for (const [path, version] of batch) {
        files.set(path, version);
      }
    }
    return { kind: "base", base: { ...opened.header, files } };
  } catch (cause) {
    return { kind: "corrupt", reason: reasonOf(cause) };
  }
}

/** The first line of `file`, read no further; undefined for an empty file. */
async function firstLine(file: string): Promise<string | undefined> {
  const input = createReadStream(file, { encoding: "utf8", highWaterMark: 4096 });
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  try {
    for await (const line of lines) {
      return line;
    }
    return undefined;
  } finally {
    lines.close();
    input.destroy();
  }
}

/**
 * The header of the base in `file` (of `tag`, when given); undefined when there is none or it is
 * unreadable. The paths are not read: a damaged path line shows only when the sender reads it all.
 */
export async function readCatalogHeader(file: string, tag?: string): Promise<CatalogBaseHeader | undefined> {
  try {
    const line = await firstLine(file);
    return line === undefined ? undefined : parseHeader(line, tag);
  } catch {
    return undefined;
  }
}

/**
 * The headers of every base this agent keeps for `repositoryUrl`, by tag. A file of another
 * repository, a temporary file or an unreadable header is passed over; never throws.
 */
export async function listCatalogBases(
  stateDir: string,
  repositoryUrl: string,
): Promise<CatalogBaseHeader[]> {
  let names: string[];
  try {
    names = await readdir(catalogDir(stateDir));
  } catch {
    return [];
  }
  const headers: CatalogBaseHeader[] = [];
  for (const name of names.filter((entry) => !entry.startsWith(".")).sort()) {
    const header = await readCatalogHeader(join(catalogDir(stateDir), name));
    if (header !== undefined && basename(catalogStateFile(stateDir, repositoryUrl, header.tag)) === name) {
      headers.push(header);
    }
  }
  return headers.sort((a, b) => (a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : 0));
}

async function* stateText(
  header: CatalogBaseHeader,
  paths: Iterable<CatalogLine> | AsyncIterable<readonly CatalogLine[]>,
): AsyncGenerator<string> {
  const head = { snapshot_id: header.snapshot_id, time: header.time, tag: header.tag };
  let batch = `${JSON.stringify(head)}\n`;
  const add = (line: CatalogLine) => {
    batch += `${JSON.stringify(line)}\n`;
  };
  if (Symbol.asyncIterator in paths) {
    for await (const lines of paths) {
      for (const line of lines) {
        add(line);
      }
      if (batch.length >= WRITE_BATCH_BYTES) {
        yield batch;
        batch = "";
      }
    }
  } else {
    for (const line of paths) {
      add(line);
      if (batch.length >= WRITE_BATCH_BYTES) {
        yield batch;
        batch = "";
      }
    }
  }
  yield batch;
}

/** Replaces the base in `file` as a whole. */
export async function writeCatalogBase(file: string, base: CatalogBase): Promise<void> {
  await writeFileAtomic(file, stateText(base, base.files), 0o600);
}

/**
 * Replaces the base in `file` as a whole with `paths` as they stream by (the new snapshot's
 * listing, in its order, which the next merge relies on); resolves to how many were written.
 */
export async function writeCatalogBaseLines(
  file: string,
  header: CatalogBaseHeader,
  paths: AsyncIterable<readonly CatalogLine[]>,
): Promise<number> {
  let count = 0;
  async function* counted(): AsyncGenerator<readonly CatalogLine[]> {
    for await (const lines of paths) {
      count += lines.length;
      yield lines;
    }
  }
  await writeFileAtomic(file, stateText(header, counted()), 0o600);
  return count;
}

/**
 * Replaces the base in `file` with the same paths under `header`: for a delta that changed nothing,
 * whose new snapshot holds exactly the base's paths and versions in the same order. The path lines
 * are copied as bytes, none parsed; resolves to how many were copied.
 */
export async function renewCatalogBase(file: string, header: CatalogBaseHeader): Promise<number> {
  let count = 0;
  const handle = await open(file);
  async function* text(): AsyncGenerator<string | Uint8Array> {
    const head = { snapshot_id: header.snapshot_id, time: header.time, tag: header.tag };
    yield `${JSON.stringify(head)}\n`;
    let inHeader = true;
    for await (const chunk of fileChunks(handle)) {
      let data = chunk;
      if (inHeader) {
        const end = data.indexOf(NEWLINE);
        if (end === -1) {
          continue;
        }
        inHeader = false;
        data = data.subarray(end + 1);
      }
      for (let at = data.indexOf(NEWLINE); at !== -1; at = data.indexOf(NEWLINE, at + 1)) {
        count += 1;
      }
      yield data;
    }
  }
  try {
    await writeFileAtomic(file, text(), 0o600);
  } finally {
    await handle.close();
  }
  return count;
}
