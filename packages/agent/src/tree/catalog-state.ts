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
import { readdir } from "node:fs/promises";
import { basename, join } from "node:path";
import { createInterface } from "node:readline";
import { RFC3339_UTC_PATTERN, SNAPSHOT_ID_PATTERN } from "@fleetback/protocol";
import { writeFileAtomic } from "../config/atomic-write.js";
import { type CatalogFiles, entryOfVersion } from "./catalog-delta.js";

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

function parseFileLine(line: string, files: CatalogFiles): void {
  const parsed: unknown = JSON.parse(line);
  if (!Array.isArray(parsed) || typeof parsed[0] !== "string" || typeof parsed[1] !== "string") {
    throw new DamagedState("a path line is not [path, version]");
  }
  const [path, version] = parsed as [string, string];
  if (!path.startsWith("/") || entryOfVersion(path, version) === undefined) {
    throw new DamagedState("a path line holds no path or version");
  }
  files.set(path, version);
}

/** The base of `tag` in `file`; missing or unreadable, none. Never throws. */
export async function readCatalogBase(file: string, tag: string): Promise<CatalogBaseRead> {
  try {
    const lines = createInterface({
      input: createReadStream(file, "utf8"),
      crlfDelay: Number.POSITIVE_INFINITY,
    });
    let header: CatalogBaseHeader | undefined;
    const files: CatalogFiles = new Map();
    for await (const line of lines) {
      if (header === undefined) {
        header = parseHeader(line, tag);
      } else if (line !== "") {
        parseFileLine(line, files);
      }
    }
    return header === undefined
      ? { kind: "corrupt", reason: "it is empty" }
      : { kind: "base", base: { ...header, files } };
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === "ENOENT") {
      return { kind: "none" };
    }
    return { kind: "corrupt", reason: cause instanceof Error ? cause.message : String(cause) };
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

function* stateText(base: CatalogBase): Generator<string> {
  const header = { snapshot_id: base.snapshot_id, time: base.time, tag: base.tag };
  let batch = `${JSON.stringify(header)}\n`;
  for (const entry of base.files) {
    batch += `${JSON.stringify(entry)}\n`;
    if (batch.length >= WRITE_BATCH_BYTES) {
      yield batch;
      batch = "";
    }
  }
  yield batch;
}

/** Replaces the base in `file` as a whole. */
export async function writeCatalogBase(file: string, base: CatalogBase): Promise<void> {
  await writeFileAtomic(file, stateText(base), 0o600);
}
