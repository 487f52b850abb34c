import { rmSync } from "node:fs";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setImmediate as nextTurn } from "node:timers/promises";
import type { CatalogAck, CatalogAckStatus, CatalogDelta, TreeEntry } from "@fleetback/protocol";
import { createManualTimers, type ManualTimers } from "@fleetback/protocol/manual-timers";
import { beforeEach, describe, expect, it } from "vitest";
import { createMemoryLogger, type MemoryLogger } from "../testing/memory-logger.js";
import { writeIndex } from "../testing/tree-index.js";
import { DEFAULT_PART_LIMITS } from "./catalog-delta.js";
import {
  CATALOG_ACK_TIMEOUT_MS,
  type CatalogResult,
  type CatalogSender,
  type CatalogSnapshot,
  createCatalogSender,
} from "./catalog-sender.js";
import { catalogStateFile, readCatalogBase } from "./catalog-state.js";

const URL = "/srv/repo";
const TAG = "docs";
const FIRST = "1".repeat(64);
const SECOND = "2".repeat(64);
const MTIME = "2026-03-01T10:00:00.000Z";

function node(path: string, type: TreeEntry["type"] = "file", size = 1): TreeEntry {
  return { name: path.slice(path.lastIndexOf("/") + 1), path, type, size, mtime: MTIME };
}

const FIRST_TREE = [node("/srv", "dir", 0), node("/srv/a"), node("/srv/b"), node("/srv/c")];
/** /srv/a grew, /srv/b went, /srv/d came. */
const SECOND_TREE = [node("/srv", "dir", 0), node("/srv/a", "file", 2), node("/srv/c"), node("/srv/d")];

let stateDir: string;
let timers: ManualTimers;
let log: MemoryLogger;
let sent: CatalogDelta[];
/** How the fake server answers each delta's last part, in turn; none left: no answer. */
let answers: CatalogAckStatus[];
let online: boolean;
let sender: CatalogSender;
let onSent: (() => void) | undefined;

function startSender(options: { partLimits?: typeof DEFAULT_PART_LIMITS } = {}): CatalogSender {
  return createCatalogSender({
    stateDir,
    timers,
    log,
    ...options,
    send: (delta) => {
      if (!online) {
        return false;
      }
      sent.push(delta);
      onSent?.();
      const status = delta.part === delta.parts - 1 ? answers.shift() : undefined;
      if (status !== undefined) {
        // Answered later, as from the socket.
        queueMicrotask(() => sender.ack({ snapshot_id: delta.snapshot_id, tag: delta.tag, status }));
      }
      return true;
    },
  });
}

beforeEach(async () => {
  stateDir = await mkdtemp(join(tmpdir(), "fleetback-catalog-sender-"));
  timers = createManualTimers();
  log = createMemoryLogger();
  sent = [];
  answers = [];
  online = true;
  onSent = undefined;
  sender = startSender();
});

async function snapshot(
  id: string,
  nodes: TreeEntry[],
  time = "2026-03-02T00:00:00Z",
): Promise<CatalogSnapshot> {
  return { indexDir: await writeIndex(nodes), repositoryUrl: URL, snapshotId: id, tag: TAG, time };
}

async function baseId(): Promise<string | null> {
  const read = await readCatalogBase(catalogStateFile(stateDir, URL, TAG), TAG);
  return read.kind === "base" ? read.base.snapshot_id : null;
}

/** Once `count` parts went out: reading the index and the base is real I/O, of no set length. */
function untilSent(count: number): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if (sent.length >= count) {
        onSent = undefined;
        resolve();
      }
    };
    onSent = check;
    check();
  });
}

/** Once the sender waits on its ack timer, which it sets a turn of the event loop after its last part. */
async function untilWaiting(parts = 1): Promise<void> {
  await untilSent(parts);
  for (let turn = 0; turn < 10 && timers.pending() === 0; turn += 1) {
    await nextTurn();
  }
  expect(timers.pending()).toBe(1);
}

/** The first applied snapshot, so that the next delta has a base. */
async function applyFirst(): Promise<void> {
  answers = ["applied"];
  expect(await sender.send(await snapshot(FIRST, FIRST_TREE), new AbortController().signal)).toBe("applied");
  sent = [];
}

describe("catalogue sender", () => {
  it("sends every path with no base, then only the changes against the applied base", async () => {
    answers = ["applied"];
    const first = await sender.send(
      await snapshot(FIRST, FIRST_TREE, "2026-03-01T00:00:00Z"),
      new AbortController().signal,
    );
    expect(first).toBe("applied");
    expect(sent).toEqual([
      {
        snapshot_id: FIRST,
        tag: TAG,
        time: "2026-03-01T00:00:00Z",
        base_snapshot_id: null,
        part: 0,
        parts: 1,
        changed: FIRST_TREE.map(({ name: _name, ...entry }) => entry),
        removed: [],
      },
    ]);
    expect(await baseId()).toBe(FIRST);

    sent = [];
    answers = ["applied"];
    expect(await sender.send(await snapshot(SECOND, SECOND_TREE), new AbortController().signal)).toBe(
      "applied",
    );
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ snapshot_id: SECOND, base_snapshot_id: FIRST, part: 0, parts: 1 });
    expect(sent[0]?.changed.map((entry) => [entry.path, entry.size])).toEqual([
      ["/srv/a", 2],
      ["/srv/d", 1],
    ]);
    expect(sent[0]?.removed).toEqual(["/srv/b"]);
    expect(await baseId()).toBe(SECOND);
  });

  it("sends an unchanged snapshot as one empty part, and moves the base", async () => {
    await applyFirst();
    answers = ["applied"];
    expect(await sender.send(await snapshot(SECOND, FIRST_TREE), new AbortController().signal)).toBe(
      "applied",
    );
    expect(sent).toMatchObject([{ base_snapshot_id: FIRST, part: 0, parts: 1, changed: [], removed: [] }]);
    expect(await baseId()).toBe(SECOND);
  });

  it("resend_full: sends every path again with no base, and the base moves when that is applied", async () => {
    await applyFirst();
    answers = ["resend_full", "applied"];
    expect(await sender.send(await snapshot(SECOND, SECOND_TREE), new AbortController().signal)).toBe(
      "applied",
    );
    expect(sent.map((delta) => delta.base_snapshot_id)).toEqual([FIRST, null]);
    expect(sent[1]?.changed.map((entry) => entry.path)).toEqual(["/srv", "/srv/a", "/srv/c", "/srv/d"]);
    expect(sent[1]?.removed).toEqual([]);
    expect(await baseId()).toBe(SECOND);
  });

  it("resend_full twice: gives up after one full resend and keeps the base", async () => {
    await applyFirst();
    answers = ["resend_full", "resend_full", "applied"];
    expect(await sender.send(await snapshot(SECOND, SECOND_TREE), new AbortController().signal)).toBe(
      "resend_full",
    );
    expect(sent).toHaveLength(2);
    expect(await baseId()).toBe(FIRST);
    expect(log.entries.some((entry) => entry.level === "warn" && /giving up/.test(entry.message))).toBe(true);
  });

  it("refused: keeps the base and logs the server's reason", async () => {
    await applyFirst();
    const answer = (ack: CatalogAck) => queueMicrotask(() => sender.ack(ack));
    sender = createCatalogSender({
      stateDir,
      timers,
      log,
      send: (delta) => {
        sent.push(delta);
        answer({
          snapshot_id: delta.snapshot_id,
          tag: delta.tag,
          status: "refused",
          error: "older than the newest",
        });
        return true;
      },
    });
    expect(await sender.send(await snapshot(SECOND, SECOND_TREE), new AbortController().signal)).toBe(
      "refused",
    );
    expect(await baseId()).toBe(FIRST);
    expect(log.text()).toContain("older than the newest");
  });

  it("a part the server refuses is answered at once: the rest is not sent", async () => {
    sender = createCatalogSender({
      stateDir,
      timers,
      log,
      partLimits: { ...DEFAULT_PART_LIMITS, entries: 1 },
      send: (delta) => {
        sent.push(delta);
        if (delta.part === 0) {
          queueMicrotask(() =>
            sender.ack({ snapshot_id: delta.snapshot_id, tag: delta.tag, status: "refused" }),
          );
        }
        return true;
      },
    });
    expect(await sender.send(await snapshot(FIRST, FIRST_TREE), new AbortController().signal)).toBe(
      "refused",
    );
    expect(sent.map((delta) => [delta.part, delta.parts])).toEqual([[0, 4]]);
  });

  it("no ack within the timeout: keeps the base; a late ack is ignored", async () => {
    await applyFirst();
    const result = sender.send(await snapshot(SECOND, SECOND_TREE), new AbortController().signal);
    await untilWaiting();
    expect(timers.pendingDelays()).toEqual([CATALOG_ACK_TIMEOUT_MS]);
    timers.advance(CATALOG_ACK_TIMEOUT_MS - 1);
    expect(timers.pending()).toBe(1);
    timers.advance(1);
    expect(await result).toBe("unanswered");
    sender.ack({ snapshot_id: SECOND, tag: TAG, status: "applied" });
    expect(await baseId()).toBe(FIRST);
  });

  it("offline: nothing goes out, no ack is awaited, the base stays", async () => {
    await applyFirst();
    online = false;
    expect(await sender.send(await snapshot(SECOND, SECOND_TREE), new AbortController().signal)).toBe(
      "unsent",
    );
    expect(timers.pending()).toBe(0);
    expect(await baseId()).toBe(FIRST);
  });

  it("the next job's arrival (the signal) ends the wait and keeps the base", async () => {
    await applyFirst();
    const next = new AbortController();
    const result = sender.send(await snapshot(SECOND, SECOND_TREE), next.signal);
    await untilWaiting();
    next.abort();
    expect(await result).toBe("aborted");
    expect(timers.pending()).toBe(0);
    expect(await baseId()).toBe(FIRST);
  });

  it("waits only for the ack of its own snapshot and tag", async () => {
    const result = sender.send(await snapshot(FIRST, FIRST_TREE), new AbortController().signal);
    await untilWaiting();
    sender.ack({ snapshot_id: SECOND, tag: TAG, status: "applied" });
    sender.ack({ snapshot_id: FIRST, tag: "mail", status: "applied" });
    await nextTurn();
    expect(timers.pending()).toBe(1);
    sender.ack({ snapshot_id: FIRST, tag: TAG, status: "applied" });
    expect(await result).toBe("applied");
  });

  it("sends one delta at a time: the second starts after the first's ack", async () => {
    const results: CatalogResult[] = [];
    const first = sender.send(await snapshot(FIRST, FIRST_TREE), new AbortController().signal);
    const second = sender.send(await snapshot(SECOND, SECOND_TREE), new AbortController().signal);
    void first.then((result) => results.push(result));
    await untilWaiting();
    expect(sent.map((delta) => delta.snapshot_id)).toEqual([FIRST]);
    answers = ["applied"];
    sender.ack({ snapshot_id: FIRST, tag: TAG, status: "applied" });
    expect(await second).toBe("applied");
    expect(results).toEqual(["applied"]);
    expect(sent.map((delta) => [delta.snapshot_id, delta.base_snapshot_id])).toEqual([
      [FIRST, null],
      [SECOND, FIRST],
    ]);
  });

  it("a corrupt base is no base: every path goes, and the applied snapshot replaces it", async () => {
    await applyFirst();
    await writeFile(catalogStateFile(stateDir, URL, TAG), "garbage\n");
    answers = ["applied"];
    expect(await sender.send(await snapshot(SECOND, SECOND_TREE), new AbortController().signal)).toBe(
      "applied",
    );
    expect(sent).toMatchObject([{ base_snapshot_id: null, removed: [] }]);
    expect(sent[0]?.changed).toHaveLength(SECOND_TREE.length);
    expect(await baseId()).toBe(SECOND);
    expect(log.entries.some((entry) => entry.level === "warn" && /unreadable/.test(entry.message))).toBe(
      true,
    );
  });

  it("a base damaged after its header is no base either: every path goes", async () => {
    await applyFirst();
    const file = catalogStateFile(stateDir, URL, TAG);
    await writeFile(file, `${await readFile(file, "utf8")}["/srv/x", "file\\t1\\tlater"]\n`);
    answers = ["applied"];
    expect(await sender.send(await snapshot(SECOND, SECOND_TREE), new AbortController().signal)).toBe(
      "applied",
    );
    expect(sent).toMatchObject([{ base_snapshot_id: null, removed: [] }]);
    expect(sent[0]?.changed).toHaveLength(SECOND_TREE.length);
    expect(await baseId()).toBe(SECOND);
    expect(log.entries.some((entry) => entry.level === "warn" && /unreadable/.test(entry.message))).toBe(
      true,
    );
  });

  it("a listing out of restic's order is compared in memory, to the same delta", async () => {
    const unordered = [node("/srv", "dir", 0), node("/srv/c"), node("/srv/b"), node("/srv/a")];
    answers = ["applied"];
    expect(await sender.send(await snapshot(FIRST, unordered), new AbortController().signal)).toBe("applied");
    expect(sent[0]?.changed.map((entry) => entry.path)).toEqual(["/srv", "/srv/c", "/srv/b", "/srv/a"]);
    sent = [];
    answers = ["applied"];
    // The base kept the listing's order, so this in-order snapshot is compared in memory too.
    expect(await sender.send(await snapshot(SECOND, SECOND_TREE), new AbortController().signal)).toBe(
      "applied",
    );
    expect(sent).toMatchObject([{ base_snapshot_id: FIRST, part: 0, parts: 1, removed: ["/srv/b"] }]);
    expect(sent[0]?.changed.map((entry) => [entry.path, entry.size])).toEqual([
      ["/srv/a", 2],
      ["/srv/d", 1],
    ]);
    expect(await baseId()).toBe(SECOND);
    expect(log.text()).toContain("not in the merge's order");
  });

  it("reads an index deleted while it sends (evicted) to the end: the base still moves", async () => {
    const first = await snapshot(FIRST, FIRST_TREE);
    onSent = () => {
      onSent = undefined;
      rmSync(first.indexDir, { recursive: true, force: true });
    };
    answers = ["applied"];
    expect(await sender.send(first, new AbortController().signal)).toBe("applied");
    const read = await readCatalogBase(catalogStateFile(stateDir, URL, TAG), TAG);
    expect(read.kind === "base" && [...read.base.files.keys()]).toEqual(
      FIRST_TREE.map((entry) => entry.path),
    );
  });

  it("sends nothing when the delta needs more than the most parts", async () => {
    sender = startSender({ partLimits: { ...DEFAULT_PART_LIMITS, entries: 1, parts: 3 } });
    expect(await sender.send(await snapshot(FIRST, FIRST_TREE), new AbortController().signal)).toBe(
      "too_large",
    );
    expect(sent).toEqual([]);
    expect(await baseId()).toBeNull();
  });

  it("a missing index fails the catalogue, not the caller, and never logs the repository URL", async () => {
    const secretUrl = "rest:https://u:catalog-secret@example/repo";
    const result = await sender.send(
      {
        indexDir: join(stateDir, "no-such-index"),
        repositoryUrl: secretUrl,
        snapshotId: FIRST,
        tag: TAG,
        time: MTIME,
      },
      new AbortController().signal,
    );
    expect(result).toBe("failed");
    expect(sent).toEqual([]);
    expect(log.text()).not.toContain("catalog-secret");
  });
});
