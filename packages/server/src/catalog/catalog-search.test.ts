import type { Database } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import { describe, expect, it } from "vitest";
import { parseSelector } from "../labels/selector.js";
import { seedHost } from "../testing/seed.js";
import { applyCatalogPart } from "./catalog-apply.js";
import { pruneForgottenVersions } from "./catalog-prune.js";
import { CatalogQueryError, parseCatalogQuery } from "./catalog-query.js";
import { searchCatalogue } from "./catalog-search.js";
import { delta, entry, reportSnapshots, seedGroup, snapshotIdOf } from "./catalog-test-support.js";
import { fileHistory } from "./file-history.js";

describe("search text", () => {
  it("reads names, folder globs and relative folders", () => {
    expect(parseCatalogQuery(" id_RSA ")).toEqual({ name: "id_rsa" });
    expect(parseCatalogQuery("*/nginx/*.conf")).toEqual({ name: "*.conf", dir: "*/nginx" });
    expect(parseCatalogQuery("nginx/nginx.conf")).toEqual({ name: "nginx.conf", dir: "*/nginx" });
    expect(parseCatalogQuery("/etc/hosts")).toEqual({ name: "hosts", dir: "/etc" });
    expect(parseCatalogQuery("/vmlinuz")).toEqual({ name: "vmlinuz", dir: "/" });
    expect(() => parseCatalogQuery("  ")).toThrow(CatalogQueryError);
    expect(() => parseCatalogQuery("/etc/")).toThrow(/ends with \//);
  });
});

runDbSuite("fleet search", (getDb) => {
  /** Three hosts: a secret planted on web-1 (changed once) and web-2, never on db-1. */
  async function fleet(db: Database) {
    const ids: string[] = [];
    for (const [name, labels] of [
      ["web-1", { role: "web" }],
      ["web-2", { role: "web" }],
      ["db-1", { role: "db" }],
    ] as const) {
      const { host } = await seedHost({ db }, { name, labels });
      await seedGroup(db, host.id);
      ids.push(host.id);
    }
    const [web1, web2, db1] = ids as [string, string, string];
    const common = [entry("/etc/hosts", 10), entry("/etc/nginx/nginx.conf", 100)];
    await applyCatalogPart(db, web1, delta(0, { changed: [...common, entry("/etc/ssh/id_rsa", 1600)] }));
    await applyCatalogPart(db, web1, delta(1));
    await applyCatalogPart(db, web1, delta(2, { changed: [entry("/etc/ssh/id_rsa", 1700, 2)] }));
    await applyCatalogPart(db, web1, delta(3));
    await reportSnapshots(db, web1, [0, 1, 2, 3]);
    await applyCatalogPart(db, web2, delta(0, { changed: [...common, entry("/etc/ssh/id_rsa", 1600)] }));
    await reportSnapshots(db, web2, [0]);
    await applyCatalogPart(db, db1, delta(0, { changed: common }));
    await reportSnapshots(db, db1, [0]);
    const { host: fresh } = await seedHost({ db }, { name: "new-1" });
    return { web1, web2, db1, fresh: fresh.id };
  }

  it("finds a file on the hosts that hold it, one line per version with its snapshots", async () => {
    const db = getDb();
    const { web1, web2, fresh } = await fleet(db);
    const result = await searchCatalogue(db, parseCatalogQuery("id_rsa"), {});
    expect(
      result.hits.map((hit) => [
        hit.host.id,
        hit.path,
        hit.size,
        hit.snapshotCount,
        hit.first.id,
        hit.last.id,
        hit.current,
      ]),
    ).toEqual([
      [web1, "/etc/ssh/id_rsa", 1700, 2, snapshotIdOf(2), snapshotIdOf(3), true],
      [web1, "/etc/ssh/id_rsa", 1600, 2, snapshotIdOf(0), snapshotIdOf(1), false],
      [web2, "/etc/ssh/id_rsa", 1600, 1, snapshotIdOf(0), snapshotIdOf(0), true],
    ]);
    expect(result.more).toBe(false);
    expect(result.notCatalogued.map((host) => host.id)).toEqual([fresh]);
    expect((await searchCatalogue(db, parseCatalogQuery("no-such-file"), {})).hits).toEqual([]);
  });

  it("matches globs on names and folders, and narrows by host, label, group and time", async () => {
    const db = getDb();
    const { web1, db1 } = await fleet(db);
    const conf = await searchCatalogue(db, parseCatalogQuery("*/nginx/*.CONF"), {});
    expect(conf.hits.map((hit) => hit.host.name)).toEqual(["db-1", "web-1", "web-2"]);
    expect((await searchCatalogue(db, parseCatalogQuery("nginx.*"), {})).hits).toHaveLength(3);
    expect((await searchCatalogue(db, parseCatalogQuery("*ginx*"), {})).hits).toHaveLength(3);
    expect((await searchCatalogue(db, parseCatalogQuery("/etc/*"), {})).hits.map((hit) => hit.path)).toEqual([
      "/etc/hosts",
      "/etc/hosts",
      "/etc/hosts",
    ]);
    const narrowed = await searchCatalogue(db, parseCatalogQuery("hosts"), {
      selector: parseSelector("role=web"),
      hostIds: [web1, db1],
    });
    expect(narrowed.hits.map((hit) => hit.host.id)).toEqual([web1]);
    expect((await searchCatalogue(db, parseCatalogQuery("hosts"), { groups: ["home"] })).hits).toEqual([]);
    const early = await searchCatalogue(db, parseCatalogQuery("id_rsa"), {
      hostIds: [web1],
      to: new Date(Date.UTC(2026, 10, 1, 3, 1)),
    });
    expect(early.hits.map((hit) => [hit.size, hit.snapshotCount])).toEqual([[1600, 2]]);
    const paged = await searchCatalogue(db, parseCatalogQuery("*"), {}, { limit: 2 });
    expect(paged.hits).toHaveLength(2);
    expect(paged.more).toBe(true);
    const whole = await searchCatalogue(db, parseCatalogQuery("*"), {});
    const second = await searchCatalogue(db, parseCatalogQuery("*"), {}, { limit: 2, offset: 2 });
    expect(second.hits).toEqual(whole.hits.slice(2, 4));
    const last = await searchCatalogue(
      db,
      parseCatalogQuery("*"),
      {},
      { limit: 100, offset: whole.hits.length - 1 },
    );
    expect(last).toMatchObject({ more: false, hits: whole.hits.slice(-1) });
  });

  it("lists a path's versions with the snapshots that hold each, and leaves out forgotten ones", async () => {
    const db = getDb();
    const { web1 } = await fleet(db);
    const history = await fileHistory(db, web1, "/etc/ssh/id_rsa");
    expect(history.map((version) => [version.size, version.snapshots.map((s) => s.id)])).toEqual([
      [1700, [snapshotIdOf(3), snapshotIdOf(2)]],
      [1600, [snapshotIdOf(1), snapshotIdOf(0)]],
    ]);
    // Retention forgot the older snapshots: their version is held by none and is no hit.
    await reportSnapshots(db, web1, [2, 3]);
    expect((await fileHistory(db, web1, "/etc/ssh/id_rsa")).map((version) => version.size)).toEqual([1700]);
    // And its row goes: the catalogue lasts as long as the snapshots.
    expect(await pruneForgottenVersions(db, web1)).toBe(1);
    expect(await pruneForgottenVersions(db, web1)).toBe(0);
    await reportSnapshots(db, web1, []);
    expect(await pruneForgottenVersions(db, web1)).toBe(0);
    expect((await searchCatalogue(db, parseCatalogQuery("hosts"), { hostIds: [web1] })).hits).toEqual([]);
    expect(await fileHistory(db, web1, "/etc/nothing")).toEqual([]);
  });
});
