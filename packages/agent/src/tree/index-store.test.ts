import { mkdir, mkdtemp, readdir, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createIndexStore } from "./index-store.js";
import { DIRS_FILE, ENTRIES_FILE } from "./index-writer.js";

const NOW = new Date("2026-11-22T04:00:00Z");

async function fakeIndex(root: string, key: string, bytes: number, usedAt: Date): Promise<void> {
  const dir = join(root, key);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, ENTRIES_FILE), Buffer.alloc(bytes));
  await writeFile(join(dir, DIRS_FILE), "");
  await utimes(dir, usedAt, usedAt);
}

describe("tree index eviction", () => {
  it("drops indexes unused for the TTL, then the least recently used over the size limit, and stale builds", async () => {
    const root = await mkdtemp(join(tmpdir(), "fleetback-index-"));
    const minutesAgo = (minutes: number) => new Date(NOW.getTime() - minutes * 60_000);
    await fakeIndex(root, "expired", 10, minutesAgo(61));
    await fakeIndex(root, "oldest", 400, minutesAgo(50));
    await fakeIndex(root, "older", 400, minutesAgo(40));
    await fakeIndex(root, "newest", 400, minutesAgo(1));
    await mkdir(join(root, "abandoned.building-0123456789ab"));
    await mkdir(join(root, "running.building-ba9876543210"));
    const store = createIndexStore({ root, clock: { now: () => NOW }, ttlMs: 60 * 60_000, maxBytes: 1_000 });
    await store.sweep(new Set([join(root, "running.building-ba9876543210")]));
    expect((await readdir(root)).sort()).toEqual(["newest", "older", "running.building-ba9876543210"]);
  });

  it("a lookup marks the index as used", async () => {
    const root = await mkdtemp(join(tmpdir(), "fleetback-index-"));
    await fakeIndex(root, "used", 10, new Date(NOW.getTime() - 59 * 60_000));
    let now = NOW;
    const store = createIndexStore({ root, clock: { now: () => now }, ttlMs: 60 * 60_000 });
    expect(await store.lookup("used", "/")).toEqual({ entries: [] });
    now = new Date(NOW.getTime() + 30 * 60_000);
    await store.sweep(new Set());
    expect(await readdir(root)).toEqual(["used"]);
    expect(await store.lookup("missing", "/")).toBeUndefined();
  });

  it("keeps the pinned index past the TTL and the size limit, until another is pinned", async () => {
    const root = await mkdtemp(join(tmpdir(), "fleetback-index-"));
    const hoursAgo = (hours: number) => new Date(NOW.getTime() - hours * 3_600_000);
    await fakeIndex(root, "after-last-backup", 800, hoursAgo(5));
    await fakeIndex(root, "browsed", 400, hoursAgo(0));
    const store = createIndexStore({ root, clock: { now: () => NOW }, ttlMs: 60 * 60_000, maxBytes: 1_000 });
    await store.pin("after-last-backup");
    await store.sweep(new Set());
    expect((await readdir(root)).sort()).toEqual(["after-last-backup", "pinned"]);
    await fakeIndex(root, "after-next-backup", 10, hoursAgo(0));
    await store.pin("after-next-backup");
    await store.sweep(new Set());
    expect((await readdir(root)).sort()).toEqual(["after-next-backup", "pinned"]);
  });
});
