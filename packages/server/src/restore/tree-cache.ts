/**
 * @module restore/tree-cache
 * Successful tree.list replies kept per wizard session, so that folding a folder open again (or
 * going back up the breadcrumbs) costs no agent round trip. Entries expire after about 30 minutes
 * and are swept on every access, never by a timer. The total number of tree entries
 * held is bounded, so neither a busy server nor one huge folder grows memory without limit: when
 * full, the listings closest to expiry go first, and a listing larger than the whole bound is not
 * kept at all. Errors are never stored here (the caller only stores replies with entries). A
 * folder too large for one reply is cached page by page: the cursor is part of the key.
 */
import type { TreeEntry } from "@fleetback/protocol";
import type { Clock } from "../clock.js";

export const TREE_CACHE_TTL_MS = 30 * 60_000;
/** Tree entries held across all listings (an empty listing counts as one). */
export const TREE_CACHE_MAX_ENTRIES = 200_000;

/** Who asked and what: a cached listing is served only to the same user in the same wizard session. */
export interface TreeCacheKey {
  userId: string;
  sessionId: string;
  hostId: string;
  snapshotId: string;
  path: string;
  /** The page's cursor (`tree.list.after`); absent for the first page. */
  after?: string | undefined;
}

/** One page of a folder: its entries, and the cursor of the next page when there is one. */
export interface TreePage {
  entries: TreeEntry[];
  nextAfter?: string | undefined;
}

export interface TreeCache {
  get(key: TreeCacheKey): TreePage | undefined;
  set(key: TreeCacheKey, page: TreePage): void;
  /** Live listings after a sweep (for tests and metrics). */
  size(): number;
}

export interface TreeCacheOptions {
  clock: Clock;
  ttlMs?: number;
  maxEntries?: number;
}

function keyOf(key: TreeCacheKey): string {
  // NUL never occurs in ids, paths or cursors from the wire, so the parts cannot run into each
  // other; a cursor is never empty, so "" stands for the first page.
  return [key.userId, key.sessionId, key.hostId, key.snapshotId, key.path, key.after ?? ""].join("\u0000");
}

export function createTreeCache(options: TreeCacheOptions): TreeCache {
  const ttlMs = options.ttlMs ?? TREE_CACHE_TTL_MS;
  const maxEntries = options.maxEntries ?? TREE_CACHE_MAX_ENTRIES;
  // Insertion order is expiry order (every entry lives ttlMs from its set), so a sweep stops at
  // the first live entry and eviction takes the oldest first.
  const entries = new Map<string, { expiresAt: number; page: TreePage; weight: number }>();
  let held = 0;

  function drop(key: string): void {
    const entry = entries.get(key);
    if (entry) {
      held -= entry.weight;
      entries.delete(key);
    }
  }

  function sweep(now: number): void {
    for (const [key, entry] of entries) {
      if (entry.expiresAt > now) {
        return;
      }
      drop(key);
    }
  }

  return {
    get(key) {
      sweep(options.clock.now().getTime());
      return entries.get(keyOf(key))?.page;
    },
    set(key, page) {
      const now = options.clock.now().getTime();
      sweep(now);
      const id = keyOf(key);
      drop(id);
      const weight = Math.max(1, page.entries.length);
      if (weight > maxEntries) {
        return;
      }
      while (held + weight > maxEntries) {
        const oldest = entries.keys().next();
        if (oldest.done) {
          break;
        }
        drop(oldest.value);
      }
      entries.set(id, { expiresAt: now + ttlMs, page, weight });
      held += weight;
    },
    size() {
      sweep(options.clock.now().getTime());
      return entries.size;
    },
  };
}
