import type { TreeEntry, TreeListResult } from "@fleetback/protocol";
import { MAX_FRAME_BYTES } from "@fleetback/protocol";
import { describe, expect, it } from "vitest";
import { compareNames, createTreePage } from "./tree-page.js";

const entryNamed = (name: string): TreeEntry => ({
  name,
  path: `/srv/mail/cur/${name}`,
  type: "file",
  size: 2048,
  mtime: "2026-11-21T23:40:02.000Z",
});

/** Deterministic shuffle (a linear congruential generator), so a failure replays. */
function shuffled<T>(items: readonly T[], seed = 7): T[] {
  const out = [...items];
  let state = seed;
  for (let i = out.length - 1; i > 0; i--) {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    const j = state % (i + 1);
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/** Every page of `entries` as the agent would send them, following next_after to the end. */
function allPages(entries: readonly TreeEntry[], budget?: number): TreeListResult[] {
  const pages: TreeListResult[] = [];
  let after: string | undefined;
  do {
    const page = createTreePage(after, budget);
    for (const entry of entries) {
      page.add(entry);
    }
    const result = page.result();
    pages.push(result);
    after = result.next_after;
    expect(pages.length).toBeLessThan(1_000);
  } while (after !== undefined);
  return pages;
}

const names = (pages: TreeListResult[]) => pages.flatMap((page) => page.entries?.map((e) => e.name) ?? []);

describe("tree pages", () => {
  const many = Array.from({ length: 20_000 }, (_, i) =>
    entryNamed(`${1732230000 + i}.M${i}P7.mail,S=2048:2,S`),
  );
  const sortedNames = many.map((entry) => entry.name).sort(compareNames);

  it.each([
    ["in name order", many],
    ["in any order", shuffled(many)],
  ])("20,000 children %s: the pages add up to the sorted list, no gaps, no repeats", (_order, input) => {
    const pages = allPages(input);
    expect(pages.length).toBeGreaterThanOrEqual(3);
    expect(names(pages)).toEqual(sortedNames);
    for (const page of pages) {
      expect(Buffer.byteLength(JSON.stringify(page))).toBeLessThanOrEqual(MAX_FRAME_BYTES - 4 * 1024);
      if (page.next_after !== undefined) {
        expect(page.next_after).toBe(page.entries?.at(-1)?.name);
      }
    }
    expect(pages.at(-1)?.next_after).toBeUndefined();
  });

  it("a directory that fits is one page without next_after", () => {
    const page = createTreePage();
    for (const name of ["b", "a", "c"]) {
      page.add(entryNamed(name));
    }
    expect(page.result()).toEqual({ entries: ["a", "b", "c"].map(entryNamed) });
    expect(page.more).toBe(false);
  });

  it("returns only children after the cursor, even when the cursor itself is gone", () => {
    const page = createTreePage("b");
    for (const name of ["a", "b", "bb", "c"]) {
      page.add(entryNamed(name));
    }
    expect(names([page.result()])).toEqual(["bb", "c"]);
    const gone = createTreePage("ba");
    for (const name of ["a", "b", "bb", "c"]) {
      gone.add(entryNamed(name));
    }
    expect(names([gone.result()])).toEqual(["bb", "c"]);
  });

  it("says it is done only for children in name order, once the page is full", () => {
    const budget = 600;
    const ordered = createTreePage(undefined, budget);
    let seen = 0;
    for (const entry of many) {
      ordered.add(entry);
      seen += 1;
      if (ordered.done) {
        break;
      }
    }
    expect(seen).toBeLessThan(10);
    expect(ordered.result().next_after).toBeDefined();
    const unordered = createTreePage(undefined, budget);
    for (const entry of [many[1], many[0], ...many.slice(2, 10)] as TreeEntry[]) {
      unordered.add(entry);
    }
    expect(unordered.more).toBe(true);
    expect(unordered.done).toBe(false);
  });

  it("says why when a page would end on a name too long to be a cursor", () => {
    const page = createTreePage(undefined, 4_000);
    for (const name of ["a", "x".repeat(1_100), "y".repeat(1_000)]) {
      page.add(entryNamed(name));
    }
    expect(page.result().error).toMatch(/^cannot list past \/srv\/mail\/cur\/x+: its name is too long/);
  });

  it("keeps at least one entry per page however long it is, so paging always moves on", () => {
    const long = entryNamed("x".repeat(900));
    const pages = allPages([entryNamed("a"), long, entryNamed("z")], 700);
    expect(names(pages)).toEqual(["a", long.name, "z"]);
  });
});
