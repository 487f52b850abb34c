import type { TreeEntry } from "@fleetback/protocol";
import { describe, expect, it } from "vitest";
import { createManualClock } from "../clock.js";
import { createTreeCache, type TreeCacheKey } from "./tree-cache.js";

const entry: TreeEntry = { name: "etc", path: "/etc", type: "dir", size: 0, mtime: "2026-11-21T10:00:00Z" };
const key = (overrides: Partial<TreeCacheKey> = {}): TreeCacheKey => ({
  userId: "user-1",
  sessionId: "session-aaaaaaaaaaaaaaaa",
  hostId: "host-1",
  snapshotId: "c503a2e1",
  path: "/",
  ...overrides,
});

describe("tree cache", () => {
  it("serves a listing for 30 minutes, then sweeps it on the next access", () => {
    const clock = createManualClock();
    const cache = createTreeCache({ clock });
    cache.set(key(), { entries: [entry] });
    // 30 minutes, the cache's lifetime, written out here rather than read from the implementation.
    clock.advance(30 * 60 * 1000 - 1);
    expect(cache.get(key())).toEqual({ entries: [entry] });
    expect(cache.size()).toBe(1);
    clock.advance(1);
    expect(cache.get(key())).toBeUndefined();
    expect(cache.size()).toBe(0);
  });

  it("keeps each expiry from its own set and sweeps only what is due", () => {
    const clock = createManualClock();
    const cache = createTreeCache({ clock, ttlMs: 1_000 });
    cache.set(key({ path: "/" }), { entries: [entry] });
    clock.advance(600);
    cache.set(key({ path: "/etc" }), { entries: [] });
    clock.advance(400);
    expect(cache.get(key({ path: "/" }))).toBeUndefined();
    expect(cache.get(key({ path: "/etc" }))).toEqual({ entries: [] });
    expect(cache.size()).toBe(1);
  });

  it("serves a listing only to the same user, session, host, snapshot and path", () => {
    const cache = createTreeCache({ clock: createManualClock() });
    cache.set(key(), { entries: [entry] });
    expect(cache.get(key())).toEqual({ entries: [entry] });
    for (const other of [
      key({ userId: "user-2" }),
      key({ sessionId: "session-bbbbbbbbbbbbbbbb" }),
      key({ hostId: "host-2" }),
      key({ snapshotId: "b6926cf4" }),
      key({ path: "/etc" }),
      key({ after: "etc" }),
    ]) {
      expect(cache.get(other)).toBeUndefined();
    }
  });

  it("keeps each page of a folder under its own cursor", () => {
    const cache = createTreeCache({ clock: createManualClock() });
    const next: TreeEntry = { ...entry, name: "home", path: "/home" };
    cache.set(key(), { entries: [entry], nextAfter: "etc" });
    cache.set(key({ after: "etc" }), { entries: [next] });
    expect(cache.get(key())).toEqual({ entries: [entry], nextAfter: "etc" });
    expect(cache.get(key({ after: "etc" }))).toEqual({ entries: [next] });
    expect(cache.get(key({ after: "home" }))).toBeUndefined();
    expect(cache.size()).toBe(2);
  });

  it("is bounded by tree entries held: when full, the oldest listings make room", () => {
    const clock = createManualClock();
    const cache = createTreeCache({ clock, maxEntries: 4 });
    for (const path of ["/a", "/b", "/c", "/d"]) {
      cache.set(key({ path }), { entries: [entry] });
      clock.advance(1);
    }
    expect(cache.size()).toBe(4);
    cache.set(key({ path: "/big" }), { entries: [entry, entry, entry] });
    expect(cache.size()).toBe(2);
    expect(cache.get(key({ path: "/c" }))).toBeUndefined();
    expect(cache.get(key({ path: "/d" }))).toEqual({ entries: [entry] });
    expect(cache.get(key({ path: "/big" }))?.entries).toHaveLength(3);
    // Setting the same key again replaces it instead of counting it twice.
    cache.set(key({ path: "/d" }), { entries: [] });
    expect(cache.size()).toBe(2);
  });

  it("does not keep a listing larger than the whole bound", () => {
    const cache = createTreeCache({ clock: createManualClock(), maxEntries: 2 });
    cache.set(key({ path: "/small" }), { entries: [entry] });
    cache.set(key({ path: "/huge" }), { entries: [entry, entry, entry] });
    expect(cache.get(key({ path: "/huge" }))).toBeUndefined();
    expect(cache.get(key({ path: "/small" }))).toEqual({ entries: [entry] });
  });
});
