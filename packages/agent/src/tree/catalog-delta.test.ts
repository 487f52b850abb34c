import {
  CATALOG_PART_ENTRIES_MAX,
  CATALOG_PATH_MAX_LENGTH,
  type CatalogEntry,
  encode,
  MAX_FRAME_BYTES,
} from "@fleetback/protocol";
import { describe, expect, it } from "vitest";
import {
  type CatalogFiles,
  type CatalogHeader,
  catalogued,
  DEFAULT_PART_LIMITS,
  diffCatalog,
  entryOfVersion,
  PART_JSON_BYTES_MAX,
  splitDelta,
  versionOf,
} from "./catalog-delta.js";

const TIME = "2026-03-01T10:00:00.000Z";
const HEADER: CatalogHeader = {
  snapshot_id: "a".repeat(64),
  tag: "docs",
  time: "2026-03-02T00:00:00Z",
  base_snapshot_id: null,
};

function file(path: string, size = 1, mtime = TIME): CatalogEntry {
  return { path, type: "file", size, mtime };
}

function filesOf(entries: CatalogEntry[]): CatalogFiles {
  return new Map(entries.map((entry) => [entry.path, versionOf(entry)]));
}

describe("diffCatalog", () => {
  it("lists every path as changed when there is no base", () => {
    const current = filesOf([{ path: "/srv", type: "dir", size: 0, mtime: TIME }, file("/srv/a")]);
    expect(diffCatalog(undefined, current)).toEqual({
      changed: [{ path: "/srv", type: "dir", size: 0, mtime: TIME }, file("/srv/a")],
      removed: [],
    });
  });

  it("changed: new paths and other type, size or mtime; removed: paths gone; the rest is left out", () => {
    const base = filesOf([file("/same"), file("/size"), file("/time"), file("/kind"), file("/gone")]);
    const current = filesOf([
      file("/same"),
      file("/size", 2),
      file("/time", 1, "2026-03-01T10:00:01.000Z"),
      { path: "/kind", type: "symlink", size: 1, mtime: TIME },
      file("/new"),
    ]);
    const { changed, removed } = diffCatalog(base, current);
    expect(changed.map((entry) => entry.path)).toEqual(["/size", "/time", "/kind", "/new"]);
    expect(changed[2]).toEqual({ path: "/kind", type: "symlink", size: 1, mtime: TIME });
    expect(removed).toEqual(["/gone"]);
    expect(diffCatalog(current, current)).toEqual({ changed: [], removed: [] });
  });
});

describe("versions", () => {
  it("round-trips an entry and refuses what is not a version", () => {
    const entry: CatalogEntry = { path: "/a", type: "other", size: 0, mtime: TIME };
    expect(entryOfVersion("/a", versionOf(entry))).toEqual(entry);
    expect(entryOfVersion("/a", "file\t1")).toBeUndefined();
    expect(entryOfVersion("/a", `fifo\t1\t${TIME}`)).toBeUndefined();
    expect(entryOfVersion("/a", "file\t1\tyesterday")).toBeUndefined();
    expect(entryOfVersion("/a", `file\t-1\t${TIME}`)).toBeUndefined();
  });

  it("leaves out paths longer than CATALOG_PATH_MAX_LENGTH", () => {
    expect(catalogued(`/${"x".repeat(CATALOG_PATH_MAX_LENGTH - 1)}`)).toBe(true);
    expect(catalogued(`/${"x".repeat(CATALOG_PATH_MAX_LENGTH)}`)).toBe(false);
  });
});

describe("splitDelta", () => {
  it("sends an empty delta as one empty part, so that the server records the new base", () => {
    expect(splitDelta(HEADER, { changed: [], removed: [] })).toEqual({
      ok: true,
      parts: [{ ...HEADER, part: 0, parts: 1, changed: [], removed: [] }],
    });
  });

  it("cuts at CATALOG_PART_ENTRIES_MAX entries of changed and removed together, changed first", () => {
    const changed = Array.from({ length: CATALOG_PART_ENTRIES_MAX + 5 }, (_, i) => file(`/c/${i}`));
    const removed = Array.from({ length: CATALOG_PART_ENTRIES_MAX }, (_, i) => `/r/${i}`);
    const split = splitDelta({ ...HEADER, base_snapshot_id: "b".repeat(64) }, { changed, removed });
    if (!split.ok) {
      throw new Error("expected parts");
    }
    expect(
      split.parts.map((part) => [part.part, part.parts, part.changed.length, part.removed.length]),
    ).toEqual([
      [0, 3, CATALOG_PART_ENTRIES_MAX, 0],
      [1, 3, 5, CATALOG_PART_ENTRIES_MAX - 5],
      [2, 3, 0, 5],
    ]);
    expect(split.parts.flatMap((part) => part.changed)).toEqual(changed);
    expect(split.parts.flatMap((part) => part.removed)).toEqual(removed);
    for (const part of split.parts) {
      expect(part).toMatchObject({ ...HEADER, base_snapshot_id: "b".repeat(64) });
      expect(() => encode("catalog.delta", part)).not.toThrow();
    }
  });

  it("cuts by bytes too: long multi-byte paths stay well below the frame limit", () => {
    // 4,000 two-byte characters: ~8 KiB a path, ~100 a part instead of 10,000.
    const long = (i: number) => `/${"é".repeat(CATALOG_PATH_MAX_LENGTH - 100)}/${i}`;
    const changed = Array.from({ length: 300 }, (_, i) => file(long(i)));
    const removed = Array.from({ length: 200 }, (_, i) => long(1000 + i));
    const split = splitDelta(HEADER, { changed, removed });
    if (!split.ok) {
      throw new Error("expected parts");
    }
    expect(split.parts.length).toBeGreaterThan(4);
    expect(split.parts.flatMap((part) => part.changed)).toEqual(changed);
    expect(split.parts.flatMap((part) => part.removed)).toEqual(removed);
    for (const part of split.parts) {
      const frame = Buffer.byteLength(encode("catalog.delta", part));
      expect(frame).toBeLessThan(PART_JSON_BYTES_MAX + 4096);
      expect(frame).toBeLessThan(MAX_FRAME_BYTES);
      expect(part.parts).toBe(split.parts.length);
    }
  });

  it("gives up, building nothing, when more than the most parts would be needed", () => {
    const changed = Array.from({ length: 7 }, (_, i) => file(`/${i}`));
    const limits = { ...DEFAULT_PART_LIMITS, entries: 2, parts: 3 };
    expect(splitDelta(HEADER, { changed, removed: [] }, limits)).toEqual({ ok: false, needed: 4 });
    const fits = splitDelta(HEADER, { changed: changed.slice(0, 6), removed: [] }, limits);
    expect(fits.ok && fits.parts.length).toBe(3);
  });
});
