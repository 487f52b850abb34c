import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CatalogAckStatus, CatalogDelta, Snapshot, TreeEntry } from "@fleetback/protocol";
import { createManualTimers } from "@fleetback/protocol/manual-timers";
import { beforeEach, describe, expect, it } from "vitest";
import { createMemoryLogger, type MemoryLogger } from "../testing/memory-logger.js";
import { newestFirst, groupSnapshot as snap, writeIndex } from "../testing/tree-index.js";
import { type CatalogRequest, createCatalogCatchUp } from "./catalog-catch-up.js";
import { CATALOG_CATCH_UP_MAX } from "./catalog-plan.js";
import { type CatalogSender, createCatalogSender } from "./catalog-sender.js";
import { catalogStateFile, readCatalogHeader, writeCatalogBase } from "./catalog-state.js";

const URL = "/srv/repo";
/** groupSnapshot's default host. */
const HOST = "web1";
const MTIME = "2026-03-01T10:00:00.000Z";

/** The hour of each snapshot listed so far (groupSnapshot keeps it in its id); it sizes /srv/a. */
const byId = new Map<string, number>();
function known(snapshots: Snapshot[]): Snapshot[] {
  for (const snapshot of snapshots) {
    byId.set(snapshot.id, Number(snapshot.id.slice(2, 4)));
  }
  return newestFirst(snapshots);
}

function nodes(n: number): TreeEntry[] {
  return [
    { name: "srv", path: "/srv", type: "dir", size: 0, mtime: MTIME },
    { name: "a", path: "/srv/a", type: "file", size: n, mtime: MTIME },
  ];
}

let stateDir: string;
let log: MemoryLogger;
let sent: CatalogDelta[];
let indexed: string[];
/** How the fake server answers a delta; undefined: no answer. */
let answer: (delta: CatalogDelta) => CatalogAckStatus | undefined;
/** Runs on each delta sent, before it is answered. */
let onSent: (delta: CatalogDelta) => void;
/** What the index build of a snapshot yields; default: a fresh index of its files. */
let onIndex: (snapshotId: string, signal: AbortSignal) => "build" | "fail";
let online: boolean;
let sender: CatalogSender;

beforeEach(async () => {
  stateDir = await mkdtemp(join(tmpdir(), "fleetback-catch-up-"));
  log = createMemoryLogger();
  sent = [];
  indexed = [];
  answer = () => "applied";
  onSent = () => undefined;
  onIndex = () => "build";
  online = true;
  sender = createCatalogSender({
    stateDir,
    timers: createManualTimers(),
    log,
    send: (delta) => {
      if (!online) {
        return false;
      }
      sent.push(delta);
      onSent(delta);
      const status = answer(delta);
      if (status !== undefined) {
        queueMicrotask(() => sender.ack({ snapshot_id: delta.snapshot_id, tag: delta.tag, status }));
      }
      return true;
    },
  });
});

function catchUp(maxSnapshots?: number) {
  return createCatalogCatchUp({
    stateDir,
    log,
    send: (snapshot, signal) => sender.send(snapshot, signal),
    async index(snapshotId, signal) {
      indexed.push(snapshotId);
      if (onIndex(snapshotId, signal) === "fail" || signal.aborted) {
        return undefined;
      }
      return writeIndex(nodes(byId.get(snapshotId) ?? 0));
    },
    ...(maxSnapshots === undefined ? {} : { maxSnapshots }),
  });
}

async function seedBase(snapshot: Snapshot, tag = "docs", url = URL): Promise<void> {
  const n = byId.get(snapshot.id) ?? 0;
  await writeCatalogBase(catalogStateFile(stateDir, url, tag), {
    snapshot_id: snapshot.id,
    time: snapshot.time,
    tag,
    files: new Map([
      ["/srv", `dir\t0\t${MTIME}`],
      ["/srv/a", `file\t${n}\t${MTIME}`],
    ]),
  });
}

async function baseOf(tag = "docs"): Promise<string | undefined> {
  return (await readCatalogHeader(catalogStateFile(stateDir, URL, tag), tag))?.snapshot_id;
}

function request(snapshots: Snapshot[], tag = "docs"): CatalogRequest {
  return { repositoryUrl: URL, tag, hostname: HOST, snapshots };
}

const pairs = () => sent.map((delta) => [delta.snapshot_id, delta.base_snapshot_id]);

describe("catalogue catch-up", () => {
  it("catalogues every snapshot past the base in time order, each against the one before", async () => {
    const listed = known([1, 2, 3, 4].map((n) => snap(n)));
    await seedBase(snap(1));
    const steps = await catchUp()(request(listed), new AbortController().signal);
    expect(pairs()).toEqual([
      [snap(2).id, snap(1).id],
      [snap(3).id, snap(2).id],
      [snap(4).id, snap(3).id],
    ]);
    // Each delta holds what changed since the one before: /srv/a's size.
    expect(sent.map((delta) => delta.changed.map((entry) => entry.size))).toEqual([[2], [3], [4]]);
    expect(steps.map((step) => step.result)).toEqual(["applied", "applied", "applied"]);
    expect(indexed).toEqual([snap(2).id, snap(3).id, snap(4).id]);
    expect(await baseOf()).toBe(snap(4).id);
  });

  it(`catalogues only the newest ${CATALOG_CATCH_UP_MAX} past the base, saying the older were skipped`, async () => {
    const listed = known(Array.from({ length: 12 }, (_, n) => snap(n)));
    await seedBase(snap(0));
    await catchUp()(request(listed), new AbortController().signal);
    const planned = listed
      .slice(0, CATALOG_CATCH_UP_MAX)
      .reverse()
      .map((s) => s.id);
    expect(sent.map((delta) => delta.snapshot_id)).toEqual(planned);
    // The first folds the skipped snapshots' versions in: its base is the old one.
    expect(sent[0]?.base_snapshot_id).toBe(snap(0).id);
    expect(log.entries).toContainEqual(
      expect.objectContaining({
        level: "info",
        message: expect.stringContaining("skips older snapshots"),
        fields: expect.objectContaining({ tag: "docs", skipped: 11 - CATALOG_CATCH_UP_MAX }),
      }),
    );
  });

  it("without a base sends only the newest, every path", async () => {
    const listed = known([1, 2, 3].map((n) => snap(n)));
    await catchUp()(request(listed), new AbortController().signal);
    expect(pairs()).toEqual([[snap(3).id, null]]);
  });

  it("passes over other hosts' snapshots of the tag and other tags without a base", async () => {
    const listed = known([
      snap(1),
      snap(2),
      snap(3, "docs", "web2"),
      snap(4, "mail"),
      { ...snap(5), tags: ["docs-old"] },
      snap(6, "docs", "web2"),
    ]);
    await seedBase(snap(1));
    await catchUp()(request(listed), new AbortController().signal);
    expect(pairs()).toEqual([[snap(2).id, snap(1).id]]);
    expect(await baseOf("mail")).toBeUndefined();
  });

  it("stopped midway keeps the base at the last applied snapshot; the next run goes on from it", async () => {
    const listed = known([1, 2, 3, 4].map((n) => snap(n)));
    await seedBase(snap(1));
    const next = new AbortController();
    // The next job arrives while snap 3's delta waits for its ack.
    onSent = (delta) => {
      if (delta.snapshot_id === snap(3).id) {
        next.abort();
      }
    };
    answer = (delta) => (delta.snapshot_id === snap(3).id ? undefined : "applied");
    const steps = await catchUp()(request(listed), next.signal);
    expect(steps.map((step) => [step.snapshotId, step.result])).toEqual([
      [snap(2).id, "applied"],
      [snap(3).id, "aborted"],
    ]);
    expect(indexed).toEqual([snap(2).id, snap(3).id]);
    expect(await baseOf()).toBe(snap(2).id);

    sent = [];
    onSent = () => undefined;
    answer = () => "applied";
    await catchUp()(request(listed), new AbortController().signal);
    expect(pairs()).toEqual([
      [snap(3).id, snap(2).id],
      [snap(4).id, snap(3).id],
    ]);
    expect(await baseOf()).toBe(snap(4).id);
  });

  it("stopped during an index build sends nothing more", async () => {
    const listed = known([1, 2, 3].map((n) => snap(n)));
    await seedBase(snap(1));
    const next = new AbortController();
    onIndex = (snapshotId) => {
      if (snapshotId === snap(3).id) {
        next.abort();
      }
      return "build";
    };
    await catchUp()(request(listed), next.signal);
    expect(pairs()).toEqual([[snap(2).id, snap(1).id]]);
    expect(await baseOf()).toBe(snap(2).id);
  });

  it("catches up another group with a base after the backed-up one", async () => {
    const listed = known([
      snap(1),
      snap(2),
      snap(1, "mail"),
      snap(3, "mail"),
      snap(4, "mail"),
      snap(5, "mail", "web2"),
      snap(2, "logs"),
    ]);
    await seedBase(snap(1));
    await seedBase(snap(1, "mail"), "mail");
    // A base of the same tag in another repository is that repository's.
    await seedBase(snap(1, "logs"), "logs", "/srv/other");
    await catchUp()(request(listed), new AbortController().signal);
    expect(sent.map((delta) => [delta.tag, delta.snapshot_id, delta.base_snapshot_id])).toEqual([
      ["docs", snap(2).id, snap(1).id],
      ["mail", snap(3, "mail").id, snap(1, "mail").id],
      ["mail", snap(4, "mail").id, snap(3, "mail").id],
    ]);
    expect(await baseOf("mail")).toBe(snap(4, "mail").id);
    expect(log.entries).toContainEqual(
      expect.objectContaining({
        message: "the file catalogue catches up",
        fields: expect.objectContaining({ tag: "mail", snapshots: 2 }),
      }),
    );
  });

  it("stops at no connection, and leaves the other groups for later", async () => {
    const listed = known([snap(1), snap(2), snap(1, "mail"), snap(2, "mail")]);
    await seedBase(snap(1));
    await seedBase(snap(1, "mail"), "mail");
    online = false;
    const steps = await catchUp()(request(listed), new AbortController().signal);
    expect(steps.map((step) => step.result)).toEqual(["unsent"]);
    expect(indexed).toEqual([snap(2).id]);
  });

  it("passes over a snapshot it cannot index or the server refuses; its versions fold into the next", async () => {
    const listed = known([1, 2, 3, 4].map((n) => snap(n)));
    await seedBase(snap(1));
    onIndex = (snapshotId) => (snapshotId === snap(2).id ? "fail" : "build");
    answer = (delta) => (delta.snapshot_id === snap(3).id ? "refused" : "applied");
    const steps = await catchUp()(request(listed), new AbortController().signal);
    expect(steps.map((step) => step.result)).toEqual(["unindexed", "refused", "applied"]);
    expect(pairs()).toEqual([
      [snap(3).id, snap(1).id],
      [snap(4).id, snap(1).id],
    ]);
    expect(await baseOf()).toBe(snap(4).id);
  });
});
