/**
 * @module restore/tree-listing
 * Asks a host's agent for the direct children of one directory of a snapshot (tree.list), through
 * the per-session cache. Every way this can fail is an expected outcome returned as a value: the
 * host is offline, no reply came within the timeout (at most the agent's own 60 s ceiling), or the
 * agent answered with an `error`. Failures are never cached, so asking again retries. A folder
 * too large for one reply comes in pages (protocol 4): `after` asks for the page that follows a
 * `nextAfter`, and each page is cached under its own cursor.
 */
import type { AgentEnvelope, TreeEntry } from "@fleetback/protocol";
import type { Clock } from "../clock.js";
import { type AgentHub, HubOfflineError, HubTimeoutError } from "../hub/types.js";
import { createTreeCache, type TreeCache, type TreeCacheKey, type TreePage } from "./tree-cache.js";

/**
 * How long the server waits for a tree.list.result; the agent answers within 55 s, so waiting
 * longer could only end in a dropped reply.
 */
export const TREE_LIST_TIMEOUT_MS = 60_000;

export type TreeListing =
  | ({ ok: true; cached: boolean } & TreePage)
  | { ok: false; reason: "offline" | "timeout" | "agent_error"; message: string };

export interface TreeListingOptions {
  timeoutMs?: number;
  ttlMs?: number;
  maxEntries?: number;
}

export interface TreeLister {
  list(key: TreeCacheKey): Promise<TreeListing>;
  readonly cache: TreeCache;
}

/**
 * A whole folder sorted folders first, then by name, as a file browser shows it. A folder in
 * pages keeps the agent's name order instead, so that each page continues the one above it.
 */
function ordered(entries: TreeEntry[], paged: boolean): TreeEntry[] {
  if (paged) {
    return entries;
  }
  return [...entries].sort((a, b) => {
    const folder = Number(b.type === "dir") - Number(a.type === "dir");
    return folder !== 0 ? folder : a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
  });
}

export function createTreeLister(
  deps: { hub: AgentHub; clock: Clock },
  options: TreeListingOptions = {},
): TreeLister {
  const timeoutMs = Math.min(options.timeoutMs ?? TREE_LIST_TIMEOUT_MS, TREE_LIST_TIMEOUT_MS);
  const cache = createTreeCache({
    clock: deps.clock,
    ...(options.ttlMs !== undefined ? { ttlMs: options.ttlMs } : {}),
    ...(options.maxEntries !== undefined ? { maxEntries: options.maxEntries } : {}),
  });

  return {
    cache,
    async list(key) {
      const hit = cache.get(key);
      if (hit) {
        return { ok: true, ...hit, cached: true };
      }
      let reply: AgentEnvelope<"tree.list.result">;
      try {
        reply = await deps.hub.request(
          key.hostId,
          "tree.list",
          key.after === undefined
            ? { snapshot_id: key.snapshotId, path: key.path }
            : { snapshot_id: key.snapshotId, path: key.path, after: key.after },
          "tree.list.result",
          timeoutMs,
        );
      } catch (error) {
        if (error instanceof HubOfflineError) {
          return {
            ok: false,
            reason: "offline",
            message: "The host is offline; connect its agent and try again.",
          };
        }
        if (error instanceof HubTimeoutError) {
          return {
            ok: false,
            reason: "timeout",
            message: `The agent did not answer within ${timeoutMs >= 1000 ? `${Math.round(timeoutMs / 1000)} s` : `${timeoutMs} ms`}; try again.`,
          };
        }
        throw error;
      }
      const payload = reply.payload;
      if (payload.error !== undefined || !payload.entries) {
        return { ok: false, reason: "agent_error", message: payload.error ?? "The agent sent no entries." };
      }
      const nextAfter = payload.next_after;
      const page: TreePage = {
        entries: ordered(payload.entries, key.after !== undefined || nextAfter !== undefined),
        ...(nextAfter === undefined ? {} : { nextAfter }),
      };
      cache.set(key, page);
      return { ok: true, ...page, cached: false };
    },
  };
}
