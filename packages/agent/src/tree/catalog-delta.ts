/**
 * @module tree/catalog-delta
 * The file catalogue's arithmetic (protocol 15, @fleetback/protocol file-catalog): what changed
 * between a source group's base and its new snapshot, and how that goes out in `catalog.delta`
 * parts. Pure, so that the limits are tested without files or sockets.
 *
 * A snapshot's files are held as a map of path to version (`type\tsize\tmtime`): ~230 bytes of
 * heap a path as measured (45-character paths), so 100,000 files hold ~23 MB, and a diff needs two
 * of them (base and new) plus the changed entries. Hosts with tens of millions of files would need
 * a streaming merge of sorted files instead; the parts limit (~40 million entries) is not the
 * bound, memory is.
 */
import {
  CATALOG_DELTA_MAX_PARTS,
  CATALOG_PART_ENTRIES_MAX,
  CATALOG_PATH_MAX_LENGTH,
  type CatalogDelta,
  type CatalogEntry,
  RFC3339_UTC_PATTERN,
  TREE_ENTRY_TYPES,
  type TreeEntryType,
} from "@fleetback/protocol";

/** Path → version (`versionOf`), in the index's order. */
export type CatalogFiles = Map<string, string>;

/**
 * JSON of `changed` and `removed` in one part: a quarter below MAX_FRAME_BYTES (1 MiB) leaves the
 * envelope, the header and the codec's own re-encoding room to spare.
 */
export const PART_JSON_BYTES_MAX = 768 * 1024;

export interface PartLimits {
  entries: number;
  bytes: number;
  parts: number;
}

export const DEFAULT_PART_LIMITS: PartLimits = {
  entries: CATALOG_PART_ENTRIES_MAX,
  bytes: PART_JSON_BYTES_MAX,
  parts: CATALOG_DELTA_MAX_PARTS,
};

/** What every part of one delta repeats. */
export type CatalogHeader = Pick<CatalogDelta, "snapshot_id" | "tag" | "time" | "base_snapshot_id">;

export interface CatalogChanges {
  changed: CatalogEntry[];
  removed: string[];
}

export type CatalogSplit = { ok: true; parts: CatalogDelta[] } | { ok: false; needed: number };

const VERSION_PATTERN = /^([a-z]+)\t(\d{1,15})\t([^\t]+)$/;
const TIME_PATTERN = new RegExp(RFC3339_UTC_PATTERN);

/**
 * A longer path is left out of the catalogue (CATALOG_PATH_MAX_LENGTH). UTF-16 units, not the
 * code points the schema counts: never fewer, so a path kept here always passes the codec.
 */
export function catalogued(path: string): boolean {
  return path.length <= CATALOG_PATH_MAX_LENGTH;
}

/** Type, size and mtime in one string: what makes two versions of a path the same. */
export function versionOf(entry: Pick<CatalogEntry, "type" | "size" | "mtime">): string {
  return `${entry.type}\t${entry.size}\t${entry.mtime}`;
}

/** The entry a version stands for; undefined when `version` is not one (a damaged state file). */
export function entryOfVersion(path: string, version: string): CatalogEntry | undefined {
  const match = VERSION_PATTERN.exec(version);
  const [, type = "", size = "", mtime = ""] = match ?? [];
  if (!(TREE_ENTRY_TYPES as readonly string[]).includes(type) || !TIME_PATTERN.test(mtime)) {
    return undefined;
  }
  return { path, type: type as TreeEntryType, size: Number(size), mtime };
}

/**
 * `changed`: paths of `current` that `base` lacks or holds in another version; `removed`: paths
 * of `base` that `current` lacks. No base: every path is changed.
 */
export function diffCatalog(
  base: ReadonlyMap<string, string> | undefined,
  current: CatalogFiles,
): CatalogChanges {
  const changed: CatalogEntry[] = [];
  for (const [path, version] of current) {
    if (base?.get(path) !== version) {
      const entry = entryOfVersion(path, version);
      if (entry !== undefined) {
        changed.push(entry);
      }
    }
  }
  const removed = base === undefined ? [] : [...base.keys()].filter((path) => !current.has(path));
  return { changed, removed };
}

/** Bytes an item adds to a part's JSON: itself and the comma before the next. */
function bytesOf(item: CatalogEntry | string): number {
  return Buffer.byteLength(JSON.stringify(item)) + 1;
}

/**
 * The delta in parts of at most `limits.entries` items and `limits.bytes` of item JSON, `changed`
 * first, then `removed`. An empty delta is one empty part: the server still records the new base.
 * More than `limits.parts` parts: nothing, and how many it would take.
 */
export function splitDelta(
  header: CatalogHeader,
  changes: CatalogChanges,
  limits: PartLimits = DEFAULT_PART_LIMITS,
): CatalogSplit {
  const total = changes.changed.length + changes.removed.length;
  const itemAt = (index: number) =>
    index < changes.changed.length
      ? (changes.changed[index] as CatalogEntry)
      : (changes.removed[index - changes.changed.length] as string);
  // Where each part starts; parts are cut before they are built, so an oversized delta builds none.
  const starts = [0];
  let entries = 0;
  let bytes = 0;
  for (let index = 0; index < total; index += 1) {
    const size = bytesOf(itemAt(index));
    if (entries > 0 && (entries >= limits.entries || bytes + size > limits.bytes)) {
      starts.push(index);
      entries = 0;
      bytes = 0;
    }
    entries += 1;
    bytes += size;
  }
  if (starts.length > limits.parts) {
    return { ok: false, needed: starts.length };
  }
  const parts = starts.map((start, part): CatalogDelta => {
    const end = starts[part + 1] ?? total;
    const changedEnd = Math.min(end, changes.changed.length);
    return {
      ...header,
      part,
      parts: starts.length,
      changed: start < changedEnd ? changes.changed.slice(start, changedEnd) : [],
      removed: changes.removed.slice(
        Math.max(0, start - changes.changed.length),
        Math.max(0, end - changes.changed.length),
      ),
    };
  });
  return { ok: true, parts };
}
