import type { CatalogDelta, CatalogEntry } from "@fleetback/protocol";
import { describe, expect, it } from "vitest";
import {
  type CatalogHeader,
  type CatalogLine,
  DEFAULT_PART_LIMITS,
  diffCatalog,
  splitDelta,
  versionOf,
} from "./catalog-delta.js";
import {
  type CatalogChange,
  CatalogOrderError,
  comparePaths,
  deltaParts,
  type Listing,
  mergeChanges,
  planDelta,
} from "./catalog-merge.js";

const TIME = "2026-03-01T10:00:00.000Z";
const HEADER: CatalogHeader = {
  snapshot_id: "a".repeat(64),
  tag: "docs",
  time: "2026-03-02T00:00:00Z",
  base_snapshot_id: "b".repeat(64),
};

function file(path: string, size = 1): CatalogEntry {
  return { path, type: "file", size, mtime: TIME };
}

function linesOf(entries: CatalogEntry[]): CatalogLine[] {
  return entries.map((entry) => [entry.path, versionOf(entry)]);
}

/** `lines` in batches of `size`, as the files stream them. */
function listing(lines: CatalogLine[], size = 2): Listing {
  return async function* () {
    for (let at = 0; at < lines.length; at += size) {
      yield lines.slice(at, at + size);
    }
  };
}

async function merged(base: Listing | undefined, current: Listing): Promise<CatalogChange[]> {
  const changes: CatalogChange[] = [];
  for await (const batch of mergeChanges(base?.(), current())) {
    changes.push(...batch);
  }
  return changes;
}

async function allParts(parts: AsyncIterable<CatalogDelta>): Promise<CatalogDelta[]> {
  const all: CatalogDelta[] = [];
  for await (const part of parts) {
    all.push(part);
  }
  return all;
}

describe("comparePaths", () => {
  it("orders as restic lists: depth-first, each directory's children by name", () => {
    const listed = [
      "/",
      "/srv",
      "/srv/a",
      "/srv/a/x",
      "/srv/a/x/1",
      "/srv/a b",
      "/srv/a-b",
      "/srv/a.b",
      "/srv/b",
    ];
    expect([...listed].reverse().sort(comparePaths)).toEqual(listed);
    expect(comparePaths("/srv/a", "/srv/a")).toBe(0);
  });
});

describe("mergeChanges", () => {
  const base = linesOf([file("/srv"), file("/srv/a"), file("/srv/a/x"), file("/srv/a-b"), file("/srv/c")]);

  it("finds what diffCatalog finds, holding neither listing", async () => {
    const current = linesOf([
      file("/srv"),
      file("/srv/a", 2),
      file("/srv/a-b"),
      file("/srv/b"),
      file("/srv/d"),
    ]);
    for (const size of [1, 2, 3, 100]) {
      const changes = await merged(listing(base, size), listing(current, 1 + (size % 3)));
      const expected = diffCatalog(new Map(base), new Map(current));
      expect(changes.filter((change) => typeof change !== "string")).toEqual(expected.changed);
      expect(changes.filter((change) => typeof change === "string")).toEqual(expected.removed);
      // In listing order, removed paths among the changed ones.
      expect(changes.map((change) => (typeof change === "string" ? `-${change}` : change.path))).toEqual([
        "/srv/a",
        "-/srv/a/x",
        "/srv/b",
        "-/srv/c",
        "/srv/d",
      ]);
    }
  });

  it("lists every path as changed with no base, and nothing for equal listings", async () => {
    expect(await merged(undefined, listing(base))).toEqual(diffCatalog(undefined, new Map(base)).changed);
    expect(await merged(listing(base), listing(base, 3))).toEqual([]);
    expect(await merged(listing([]), listing([]))).toEqual([]);
    expect(await merged(listing(base), listing([]))).toEqual(base.map(([path]) => path));
  });

  it("leaves out a changed path whose version is no entry, as diffCatalog does", async () => {
    const current: CatalogLine[] = [
      ["/srv", versionOf(file("/srv"))],
      ["/srv/z", "file\t1\tlater"],
    ];
    expect(await merged(undefined, listing(current))).toEqual([file("/srv")]);
  });

  it("throws CatalogOrderError for a listing out of order or holding a path twice", async () => {
    const unordered = linesOf([file("/srv"), file("/srv/b"), file("/srv/a")]);
    await expect(merged(undefined, listing(unordered))).rejects.toBeInstanceOf(CatalogOrderError);
    await expect(merged(listing(unordered), listing(base))).rejects.toBeInstanceOf(CatalogOrderError);
    const twice = linesOf([file("/srv"), file("/srv/a"), file("/srv/a")]);
    await expect(merged(listing(base), listing(twice))).rejects.toBeInstanceOf(CatalogOrderError);
    // "/srv/a-b" before "/srv/a/x" is plain string order, not restic's.
    const stringOrder = linesOf([file("/srv/a"), file("/srv/a-b"), file("/srv/a/x")]);
    await expect(merged(undefined, listing(stringOrder))).rejects.toBeInstanceOf(CatalogOrderError);
  });
});

describe("planDelta and deltaParts", () => {
  const many = (count: number, prefix: string) =>
    linesOf(Array.from({ length: count }, (_, i) => file(`/srv/${prefix}${String(i).padStart(5, "0")}`)));

  it("cut the parts where splitDelta would, each part holding its changes in listing order", async () => {
    const base = many(700, "k");
    const current = [...many(500, "k"), ...many(900, "n")];
    const limits = { ...DEFAULT_PART_LIMITS, entries: 250 };
    const plan = await planDelta(listing(base, 64), listing(current, 100), limits);
    expect(plan).toMatchObject({ changed: 900, removed: 200 });
    const parts = await allParts(deltaParts(HEADER, plan, listing(base, 64), listing(current, 100)));
    const split = splitDelta(HEADER, diffCatalog(new Map(base), new Map(current)), limits);
    expect(split.ok && split.parts.length).toBe(plan.starts.length);
    expect(parts.map((part) => [part.part, part.parts, part.changed.length + part.removed.length])).toEqual(
      [0, 1, 2, 3, 4].map((part) => [part, 5, part === 4 ? 100 : 250]),
    );
    expect(parts.flatMap((part) => part.removed)).toEqual(base.slice(500).map(([path]) => path));
    expect(parts.flatMap((part) => part.changed.map((entry) => entry.path))).toEqual(
      current.slice(500).map(([path]) => path),
    );
    expect(parts.every((part) => part.snapshot_id === HEADER.snapshot_id && part.tag === HEADER.tag)).toBe(
      true,
    );
  });

  it("cuts for the first limits that need no more than their most parts, else the last", async () => {
    const lines = many(100, "k");
    const small = { ...DEFAULT_PART_LIMITS, entries: 10, parts: 5 };
    const large = { ...DEFAULT_PART_LIMITS, entries: 40, parts: 5 };
    expect((await planDelta(undefined, listing(lines.slice(0, 50)), [small, large])).starts).toEqual([
      0, 10, 20, 30, 40,
    ]);
    expect((await planDelta(undefined, listing(lines), [small, large])).starts).toEqual([0, 40, 80]);
    expect(
      (
        await planDelta(
          undefined,
          listing(
            [...lines, ...lines.map(([p, v]) => [`${p}z`, v] as const)].sort((a, b) =>
              comparePaths(a[0], b[0]),
            ),
          ),
          [small, large],
        )
      ).starts,
    ).toHaveLength(5);
  });

  it("an empty delta is one empty part", async () => {
    const lines = many(10, "k");
    const plan = await planDelta(listing(lines), listing(lines));
    expect(await allParts(deltaParts(HEADER, plan, listing(lines), listing(lines)))).toEqual([
      { ...HEADER, part: 0, parts: 1, changed: [], removed: [] },
    ]);
  });

  it("keeps a one-part delta's changes, so that it is sent without reading the listings again", async () => {
    const base = many(10, "k");
    const current = many(12, "k");
    const plan = await planDelta(listing(base), listing(current));
    expect(plan.single).toEqual(diffCatalog(new Map(base), new Map(current)).changed);
    const unread: Listing = () => {
      throw new Error("read again");
    };
    expect(await allParts(deltaParts(HEADER, plan, unread, unread))).toMatchObject([
      { part: 0, parts: 1, changed: plan.single, removed: [] },
    ]);
    const limits = { ...DEFAULT_PART_LIMITS, entries: 1 };
    expect((await planDelta(listing(base), listing(current), limits)).single).toBeUndefined();
  });

  it("throws when a listing no longer gives what was planned", async () => {
    const lines = many(10, "k");
    const plan = await planDelta(undefined, listing(lines), { ...DEFAULT_PART_LIMITS, entries: 3 });
    expect(plan.single).toBeUndefined();
    await expect(allParts(deltaParts(HEADER, plan, undefined, listing(lines.slice(1))))).rejects.toThrow(
      /changed between/,
    );
    await expect(
      allParts(deltaParts(HEADER, plan, undefined, listing([...lines, ...many(1, "z")]))),
    ).rejects.toThrow(/changed between/);
  });
});
