import { appendFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { CATALOG_PATH_MAX_LENGTH, type TreeEntry } from "@fleetback/protocol";
import { describe, expect, it } from "vitest";
import { writeIndex } from "../testing/tree-index.js";
import { catalogFiles, indexEntries } from "./catalog-listing.js";
import { DIRS_FILE, ENTRIES_FILE } from "./index-writer.js";

const MTIME = "2026-11-21T23:40:02.000Z";

function node(path: string, type: TreeEntry["type"] = "file", size = type === "file" ? 10 : 0): TreeEntry {
  return { name: path.slice(path.lastIndexOf("/") + 1), path, type, size, mtime: MTIME };
}

async function all(indexDir: string): Promise<TreeEntry[]> {
  const entries: TreeEntry[] = [];
  for await (const batch of indexEntries(indexDir)) {
    for (const entry of batch) {
      entries.push({ ...entry, name: entry.path.slice(entry.path.lastIndexOf("/") + 1) });
    }
  }
  return entries;
}

describe("catalogue listing of a tree index", () => {
  it("yields every path with its type, size and mtime, across directories interrupted by subtrees", async () => {
    const nodes = [
      node("/home", "dir"),
      node("/home/a.txt", "file", 5),
      node("/home/b", "dir"),
      node("/home/b/deep", "dir"),
      node("/home/b/deep/x", "symlink"),
      node("/home/b/y"),
      // /home's children go on after the subtree of /home/b: a second run of /home.
      node("/home/c\nnewline é"),
      node("/home/d", "other"),
      node("/srv", "dir"),
      node("/srv/e", "file", 123_456_789_012),
    ];
    expect(await all(await writeIndex(nodes))).toEqual(nodes);
  });

  it("reads an index far larger than one read chunk, every path once", async () => {
    const nodes = [node("/mail", "dir")];
    for (let i = 0; i < 20_000; i += 1) {
      nodes.push(node(`/mail/${String(i).padStart(6, "0")}-${"m".repeat(20)}.eml`));
      if (i % 1_000 === 0) {
        nodes.push(node(`/mail/${String(i).padStart(6, "0")}-dir`, "dir"));
        nodes.push(node(`/mail/${String(i).padStart(6, "0")}-dir/inner`));
      }
    }
    const paths = (await all(await writeIndex(nodes))).map((entry) => entry.path);
    expect(paths).toHaveLength(nodes.length);
    expect(new Set(paths)).toEqual(new Set(nodes.map((entry) => entry.path)));
  });

  it("leaves over-long paths out of the catalogue's files", async () => {
    const long = `/d/${"x".repeat(CATALOG_PATH_MAX_LENGTH)}`;
    const files = await catalogFiles(await writeIndex([node("/d", "dir"), node(long), node("/d/short")]));
    expect([...files.keys()]).toEqual(["/d", "/d/short"]);
    expect(files.get("/d/short")).toBe(`file\t10\t${MTIME}`);
  });

  it("throws on a damaged index instead of yielding part of it", async () => {
    const cut = await writeIndex([node("/a", "dir"), node("/a/b")]);
    await appendFile(join(cut, ENTRIES_FILE), '["half"');
    await expect(all(cut)).rejects.toThrow(/ends inside a line/);
    const bad = await writeIndex([node("/a", "dir")]);
    await writeFile(join(bad, DIRS_FILE), "{}\n");
    await expect(all(bad)).rejects.toThrow(/damaged/);
  });
});
