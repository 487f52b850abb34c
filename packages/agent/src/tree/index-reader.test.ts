import { mkdtemp, open, readdir, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TreeEntry, TreeListResult } from "@fleetback/protocol";
import { beforeAll, describe, expect, it } from "vitest";
import { writeIndex } from "../testing/tree-index.js";
import { systemClock } from "../time/clock.js";
import { runsOf } from "./index-reader.js";
import { seekRuns } from "./index-seek.js";
import { createIndexStore, type IndexStore } from "./index-store.js";
import { DIRS_FILE, ENTRIES_FILE } from "./index-writer.js";
import { compareNames } from "./tree-page.js";

const MTIME = "2026-11-21T23:40:02.000Z";
const node = (path: string, type: TreeEntry["type"] = "file"): TreeEntry => ({
  name: path.slice(path.lastIndexOf("/") + 1),
  path,
  type,
  size: type === "file" ? 10 : 0,
  mtime: MTIME,
});

/** 30,000 children of /mail in name order, every 1,000th a folder with one file in it (more runs). */
const NAMES = Array.from({ length: 30_000 }, (_, i) => `${String(i).padStart(6, "0")}.eml`);

let lastRoot = "";
async function indexOf(nodes: TreeEntry[]): Promise<IndexStore> {
  lastRoot = await mkdtemp(join(tmpdir(), "fleetback-reader-"));
  const store = createIndexStore({ root: lastRoot, clock: systemClock });
  const target = await store.begin("k");
  await writeIndex(nodes, target.dir);
  await target.commit();
  return store;
}

async function pagesFrom(store: IndexStore, dir: string, after?: string): Promise<string[]> {
  const names: string[] = [];
  let cursor = after;
  do {
    const page = (await store.lookup("k", dir, cursor)) as TreeListResult;
    expect(page.error).toBeUndefined();
    names.push(...(page.entries ?? []).map((entry) => entry.name));
    cursor = page.next_after;
  } while (cursor !== undefined);
  return names;
}

describe("tree index pages", () => {
  let ordered: IndexStore;
  let shuffled: IndexStore;
  let orderedDir = "";

  beforeAll(async () => {
    const nodes = [node("/mail", "dir")];
    for (const [i, name] of NAMES.entries()) {
      const isDir = i % 1_000 === 0;
      nodes.push(node(`/mail/${name}`, isDir ? "dir" : "file"));
      if (isDir) {
        nodes.push(node(`/mail/${name}/inner.txt`));
      }
    }
    ordered = await indexOf(nodes);
    orderedDir = join(lastRoot, "k");
    // The same children, but two swapped: the index must not trust the order then.
    const swapped = [...nodes];
    [swapped[5], swapped[9]] = [swapped[9] as TreeEntry, swapped[5] as TreeEntry];
    shuffled = await indexOf(swapped);
  });

  it.each([undefined, "000000.eml", "004999.eml", "012345.eml", "012345.emm", "029998.eml", "0", "1"])(
    "from cursor %s, the pages add up to every later child, in order and once",
    async (after) => {
      const expected = NAMES.filter((name) => after === undefined || compareNames(name, after) > 0);
      expect(await pagesFrom(ordered, "/mail", after)).toEqual(expected);
      expect(await pagesFrom(shuffled, "/mail", after)).toEqual(expected);
    },
  );

  it("an in-order folder is entered near the cursor, not read from the top", async () => {
    expect(await readdir(orderedDir)).toContain(DIRS_FILE);
    const found = await runsOf(join(orderedDir, DIRS_FILE), "/mail");
    expect(found?.inOrder).toBe(true);
    expect(found?.runs.length).toBe(31);
    const size = (await stat(join(orderedDir, ENTRIES_FILE))).size;
    const handle = await open(join(orderedDir, ENTRIES_FILE), "r");
    try {
      const runs = await seekRuns(handle, found?.runs ?? [], "029998.eml");
      const skipped = runs[0]?.[0] ?? 0;
      expect(skipped).toBeGreaterThan(size - 128 * 1024);
      expect(await seekRuns(handle, found?.runs ?? [], "0")).toEqual(found?.runs);
    } finally {
      await handle.close();
    }
  });

  it("a folder's own children stay apart from its parent's", async () => {
    expect(await pagesFrom(ordered, "/mail/001000.eml")).toEqual(["inner.txt"]);
    expect(await ordered.lookup("k", "/mail/000001.eml")).toEqual({
      error: "not a directory: /mail/000001.eml",
    });
  });
});
