import { mkdtemp, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import type { CatalogFiles } from "./catalog-delta.js";
import {
  type CatalogBase,
  catalogStateFile,
  listCatalogBases,
  readCatalogBase,
  readCatalogHeader,
  renewCatalogBase,
  writeCatalogBase,
} from "./catalog-state.js";

const TIME = "2026-03-01T10:00:00.000Z";
const URL = "rest:https://user:secret-pw@backup.example/host";

function base(files: CatalogFiles, tag = "docs"): CatalogBase {
  return { snapshot_id: "c".repeat(64), time: "2026-03-02T00:00:00Z", tag, files };
}

async function stateDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), "fleetback-catalog-state-"));
}

describe("catalogue state", () => {
  it("keys one file per repository and tag under catalog/, naming neither in clear", async () => {
    const dir = await stateDir();
    const file = catalogStateFile(dir, URL, "docs");
    expect(dirname(file)).toBe(join(dir, "catalog"));
    expect(basename(file)).toMatch(/^[0-9a-f]{64}$/);
    expect(catalogStateFile(dir, URL, "mail")).not.toBe(file);
    expect(catalogStateFile(dir, `${URL}2`, "docs")).not.toBe(file);
    expect(catalogStateFile(dir, URL, "docs")).toBe(file);
  });

  it("reads back what it wrote: header and every path, odd names too; 0600", async () => {
    const file = catalogStateFile(await stateDir(), URL, "docs");
    const files: CatalogFiles = new Map([
      ["/srv", `dir\t0\t${TIME}`],
      ["/srv/a\tb\nc \u2028 é", `file\t123456789012\t${TIME}`],
      ["/srv/link", `symlink\t0\t${TIME}`],
    ]);
    for (let i = 0; i < 5_000; i += 1) {
      files.set(`/srv/many/${i}`, `file\t${i}\t${TIME}`);
    }
    await writeCatalogBase(file, base(files));
    expect(await readCatalogBase(file, "docs")).toEqual({ kind: "base", base: base(files) });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await readFile(file, "utf8")).split("\n")[0]).toBe(
      JSON.stringify({ snapshot_id: "c".repeat(64), time: "2026-03-02T00:00:00Z", tag: "docs" }),
    );
    // Replaced whole: no temporary file stays beside it.
    await writeCatalogBase(file, base(new Map([["/x", `file\t1\t${TIME}`]])));
    expect(await readdir(dirname(file))).toEqual([basename(file)]);
    const read = await readCatalogBase(file, "docs");
    expect(read.kind === "base" && [...read.base.files.keys()]).toEqual(["/x"]);
  });

  it("renews a base under a new header, its paths copied as they were, across read chunks", async () => {
    const file = catalogStateFile(await stateDir(), URL, "docs");
    const files: CatalogFiles = new Map();
    // Multi-byte names over several read chunks: a chunk may end inside a character.
    for (let i = 0; i < 3_000; i += 1) {
      files.set(`/srv/é€😀/${i}`, `file\t${i}\t${TIME}`);
    }
    await writeCatalogBase(file, base(files));
    const renewed = { snapshot_id: "d".repeat(64), time: "2026-03-03T00:00:00Z", tag: "docs" };
    expect(await renewCatalogBase(file, renewed)).toBe(files.size);
    expect(await readCatalogBase(file, "docs")).toEqual({ kind: "base", base: { ...renewed, files } });
    expect(await readdir(dirname(file))).toEqual([basename(file)]);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it("is no base when the file is missing, and a corrupt one when it does not read back whole", async () => {
    const dir = await stateDir();
    const file = catalogStateFile(dir, URL, "docs");
    expect(await readCatalogBase(file, "docs")).toEqual({ kind: "none" });
    await writeCatalogBase(file, base(new Map([["/a", `file\t1\t${TIME}`]])));
    const good = await readFile(file, "utf8");
    const damaged = [
      "",
      "not json\n",
      `${good}["/b", "file\\t1`,
      `${good}["/b"]\n`,
      `${good}["b", "file\\t1\\t${TIME}"]\n`,
      `${good}["/b", "file\\t1\\tlater"]\n`,
      good.replace('"tag":"docs"', '"tag":"mail"'),
      good.replace("c".repeat(64), "not-an-id"),
    ];
    for (const text of damaged) {
      await writeFile(file, text);
      expect((await readCatalogBase(file, "docs")).kind, JSON.stringify(text)).toBe("corrupt");
    }
  });

  it("reads a header alone, and lists the repository's groups with a base by tag", async () => {
    const dir = await stateDir();
    const docs = catalogStateFile(dir, URL, "docs");
    await writeCatalogBase(docs, base(new Map([["/a", `file\t1\t${TIME}`]])));
    await writeCatalogBase(catalogStateFile(dir, URL, "mail"), base(new Map(), "mail"));
    // Another repository's base, a damaged header and a stray temporary file are passed over.
    await writeCatalogBase(catalogStateFile(dir, `${URL}2`, "logs"), base(new Map(), "logs"));
    await writeFile(catalogStateFile(dir, URL, "broken"), "not json\n");
    await writeFile(join(dirname(docs), `.${basename(docs)}.0123.tmp`), "");
    // A header read alone: the damaged path after it shows only when the whole base is read.
    const headerOnly = catalogStateFile(dir, URL, "half");
    await writeCatalogBase(headerOnly, base(new Map(), "half"));
    await writeFile(headerOnly, `${(await readFile(headerOnly, "utf8")).trimEnd()}\n["/b"]\n`);
    expect(await readCatalogHeader(docs, "docs")).toEqual({
      snapshot_id: "c".repeat(64),
      time: "2026-03-02T00:00:00Z",
      tag: "docs",
    });
    expect(await readCatalogHeader(docs, "mail")).toBeUndefined();
    expect(await readCatalogHeader(catalogStateFile(dir, URL, "none"))).toBeUndefined();
    expect((await listCatalogBases(dir, URL)).map((header) => header.tag)).toEqual(["docs", "half", "mail"]);
    expect(await listCatalogBases(await stateDir(), URL)).toEqual([]);
  });
});
