/**
 * @module tree/catalog-delta
 * The file catalogue's arithmetic (protocol 15, @fleetback/protocol file-catalog): what changed
 * between a source group's base and its new snapshot, and how that goes out in `catalog.delta`
 * parts. Pure, so that the limits are tested without files or sockets.
 *
 * A path's version is `type\tsize\tmtime`. The sender streams both listings through a merge
 * (catalog-merge.ts) and holds neither; the maps here (`diffCatalog`, `splitDelta`: ~230 bytes of
 * heap a path, two maps a diff) are only its fallback for a listing out of the merge's order.
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

/** One path and its version (`versionOf`), as a listing streams them. */
export type CatalogLine = readonly [path: string, version: string];

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

/**
 * The parts the sender cuts when the delta allows: a quarter of the most bytes. A part's entries
 * and frame live until it is sent, long enough at full size for V8 to move them to the old
 * generation, which then grows by tens of MB over a 200,000-path delta (measured: ~41 MB of old
 * space with 768 KiB parts, ~14 MB with 192 KiB ones); smaller ones die young. A delta too large
 * for this many parts of this size goes in full-size parts (DEFAULT_PART_LIMITS).
 */
export const PREFERRED_PART_LIMITS: readonly PartLimits[] = [
  { ...DEFAULT_PART_LIMITS, bytes: PART_JSON_BYTES_MAX / 4 },
  DEFAULT_PART_LIMITS,
];

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
 * Where the parts of a delta start, as its items (changed entries and removed paths) are counted
 * one by one: a part ends before the item that would take it past `limits.entries` items or
 * `limits.bytes` of item JSON. Holds the starts only, so a delta is cut before any of it is built.
 */
export interface PartCuts {
  add(item: CatalogEntry | string): void;
  /** Index of each part's first item; [0] for no items (one empty part). */
  readonly starts: readonly number[];
  readonly items: number;
}

export function cutParts(limits: PartLimits = DEFAULT_PART_LIMITS): PartCuts {
  const starts = [0];
  let items = 0;
  let entries = 0;
  let bytes = 0;
  return {
    add(item) {
      const size = bytesOf(item);
      if (entries > 0 && (entries >= limits.entries || bytes + size > limits.bytes)) {
        starts.push(items);
        entries = 0;
        bytes = 0;
      }
      entries += 1;
      bytes += size;
      items += 1;
    },
    starts,
    get items() {
      return items;
    },
  };
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
  // Where each part starts; parts are cut before they are built, so an oversized delta builds none.
  const cuts = cutParts(limits);
  for (const entry of changes.changed) {
    cuts.add(entry);
  }
  for (const path of changes.removed) {
    cuts.add(path);
  }
  const { starts } = cuts;
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
