/**
 * @module tree/tree-browser
 * Answers `tree.list`: the direct children of one directory of a snapshot, within the 60 s the
 * server waits for the answer. Every restic process pays ~1 s to open the repository,
 * so the first folder of a snapshot is answered by a one-directory listing, and right after it
 * (once restic has shown that the snapshot exists, and without competing with that first answer
 * for CPU) one full listing is streamed into an on-disk index in the background (index-writer.ts);
 * every later folder of that snapshot is read from the index in milliseconds. A folder asked for
 * while the index is still being built is read from the part already written once restic's
 * depth-first stream has passed it (index-writer.ts closes each directory when its subtree is
 * behind), waiting up to BUILD_WAIT_MS for that; only then does a second restic list it directly.
 * Two restic processes opening the repository at once on a small machine took ~1.1-1.6 s a folder
 * (issue 19, B4), where the build's stream passes a folder in milliseconds. Concurrent requests
 * share one build per snapshot, at most `maxBuilds` run at once, and a failed build leaves no
 * index (the next folder simply lists directly again). A directory too large for one reply is
 * answered a page at a time (`after` / `next_after`, tree-page.ts) on both paths.
 * After a backup the agent builds its new snapshot's index ahead of any browsing (`prebuild`) and
 * pins it, so the snapshot a 3 a.m. restore most likely wants answers every folder, the first too,
 * from the index: restic's stream cannot keep up with clicks on a fresh 200,000-file snapshot.
 * The file catalogue's catch-up (catalog-catch-up.ts) builds older snapshots' indexes the same
 * way, unpinned, so that the pin stays on the backup's new snapshot.
 * The agent's own directories are never listed (issue 33): a snapshot taken before agents excluded
 * them may hold them, so a folder inside one is refused and a folder above one lacks its entry.
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import type { TreeList, TreeListResult } from "@fleetback/protocol";
import type { Logger } from "../log/logger.js";
import type { CredentialStore } from "../restic/credential-store.js";
import type { Restic } from "../restic/restic.js";
import { agentDirForms, meetAgentDirs } from "../restore-helper/agent-dirs.js";
import type { Clock } from "../time/clock.js";
import { systemTimers, type Timers } from "../time/timers.js";
import { listDirectory } from "./direct-listing.js";
import { pageOf, runsOf } from "./index-reader.js";
import { createIndexStore, type IndexStore } from "./index-store.js";
import { createIndexWriter, DIRS_FILE, type IndexWriter } from "./index-writer.js";
import { parseLsLine } from "./ls-output.js";
import { normaliseTreePath } from "./tree-path.js";

/** Below the server's 60 s wait, so that a slow listing still gets its error back in time. */
export const TREE_LIST_TIMEOUT_MS = 55_000;
export const INDEX_BUILD_TIMEOUT_MS = 15 * 60 * 1000;
/** How long a folder waits for the running build's stream to pass it before restic lists it. */
export const BUILD_WAIT_MS = 3_000;
const SWEEP_INTERVAL_MS = 60_000;

export interface TreeBrowserOptions {
  restic: Restic;
  credentials: CredentialStore;
  stateDir: string;
  /** The agent's config, state and install directories: never listed. */
  agentDirs: readonly string[];
  clock: Clock;
  log: Logger;
  listTimeoutMs?: number;
  buildTimeoutMs?: number;
  buildWaitMs?: number;
  /** Runs the wait for a build (buildWaitMs): a test's manual timers decide when it runs out. */
  timers?: Timers;
  maxBuilds?: number;
  indexTtlMs?: number;
  indexMaxBytes?: number;
}

export interface PrebuildOptions {
  /** Default true: the index outlives the TTL until the next pin. */
  pin?: boolean;
}

export interface TreeBrowser {
  list(request: TreeList): Promise<TreeListResult>;
  /**
   * Builds `snapshotId`'s index now, unless it exists, and pins it (index-store.ts) unless
   * `pin` is false (the file catalogue's catch-up of older snapshots, which must not take the pin
   * from the backup's new one). Resolves when done, failed or aborted by `signal` (which leaves no
   * index), to the index's directory (read whole by the file catalogue, tree/catalog-listing.ts)
   * or undefined; never throws.
   */
  prebuild(snapshotId: string, signal: AbortSignal, options?: PrebuildOptions): Promise<string | undefined>;
  /** Resolves when no index build is running (tests, benchmarks). */
  idle(): Promise<void>;
  /** Ends running builds and waits for them. */
  stop(): Promise<void>;
}

interface Writing {
  dir: string;
  writer: IndexWriter | undefined;
  waiters: Map<string, Set<() => void>>;
  ended: (() => void)[];
}

function wake(waiters: Map<string, Set<() => void>>, path: string): void {
  const waiting = waiters.get(path);
  if (waiting !== undefined) {
    waiters.delete(path);
    for (const waiter of waiting) {
      waiter();
    }
  }
}

export function indexRootOf(stateDir: string): string {
  return join(stateDir, "tree-index");
}

/** The index belongs to a snapshot of one repository; the key names neither in clear. */
export function indexKey(repositoryUrl: string, snapshotId: string): string {
  return createHash("sha256")
    .update(`${repositoryUrl}\n${snapshotId.toLowerCase()}`)
    .digest("hex")
    .slice(0, 32);
}

/** The reply without the agent's own directories among its entries. */
function withoutAgentDirs(reply: TreeListResult, agentDirs: readonly string[]): TreeListResult {
  return reply.entries === undefined
    ? reply
    : { ...reply, entries: reply.entries.filter((entry) => !agentDirs.includes(entry.path)) };
}

export function createTreeBrowser(options: TreeBrowserOptions): TreeBrowser {
  const { restic, credentials, log } = options;
  const store: IndexStore = createIndexStore({
    root: indexRootOf(options.stateDir),
    clock: options.clock,
    ttlMs: options.indexTtlMs,
    maxBytes: options.indexMaxBytes,
  });
  const listTimeoutMs = options.listTimeoutMs ?? TREE_LIST_TIMEOUT_MS;
  const maxBuilds = options.maxBuilds ?? 2;
  const builds = new Map<string, Promise<boolean>>();
  const buildDirs = new Set<string>();
  /** The builds writing now: where, and who waits for which directory to close. */
  const writing = new Map<string, Writing>();
  const stopping = new AbortController();
  let lastSweep = Number.NEGATIVE_INFINITY;

  const sweep = async (force = false) => {
    const now = options.clock.now().getTime();
    if (!force && now - lastSweep < SWEEP_INTERVAL_MS) {
      return;
    }
    lastSweep = now;
    await store
      .sweep(buildDirs)
      .catch((cause) => log.warn("sweeping tree indexes failed", { error: String(cause) }));
  };

  /** True when the index was built and committed. */
  const build = async (key: string, snapshotId: string, signal?: AbortSignal): Promise<boolean> => {
    const repository = credentials.repository("repo");
    if (repository === undefined) {
      return false;
    }
    const target = await store.begin(key);
    buildDirs.add(target.dir);
    const startedAt = options.clock.now().getTime();
    const abort = new AbortController();
    const onStop = () => abort.abort();
    stopping.signal.addEventListener("abort", onStop, { once: true });
    signal?.addEventListener("abort", onStop, { once: true });
    if (signal?.aborted) {
      abort.abort();
    }
    let writer: ReturnType<typeof createIndexWriter> | undefined;
    let sawSnapshot = false;
    let overflow = false;
    const current: Writing = { dir: target.dir, writer: undefined, waiters: new Map(), ended: [] };
    try {
      writer = createIndexWriter(target.dir, (path) => wake(current.waiters, path));
      current.writer = writer;
      writing.set(key, current);
      const active = writer;
      const result = await restic.run({
        subcommand: "ls",
        args: ["--no-lock", snapshotId],
        repository,
        caps: credentials.hostCaps(),
        json: true,
        signal: abort.signal,
        timeoutMs: options.buildTimeoutMs ?? INDEX_BUILD_TIMEOUT_MS,
        onLine: (line) => {
          if (line.stream !== "stdout" || overflow) {
            return;
          }
          const parsed = parseLsLine(line.text);
          if (parsed.kind === "snapshot") {
            sawSnapshot = true;
          } else if (parsed.kind === "node") {
            active.add(parsed.entry);
            if (active.bytes > store.maxBytes) {
              overflow = true;
              abort.abort();
            }
          }
        },
      });
      const ok = result.kind === "exited" && result.exitCode === 0 && !result.cancelled && !result.timedOut;
      if (!ok || !sawSnapshot || overflow) {
        writer.abandon();
        await target.discard();
        log.info("tree index not built", {
          snapshot_id: snapshotId,
          reason: overflow ? "larger than the index size limit" : "the full listing did not complete",
        });
        return false;
      }
      writer.finish();
      await target.commit();
      log.info("tree index built", {
        snapshot_id: snapshotId,
        nodes: writer.nodes,
        bytes: writer.bytes,
        ms: options.clock.now().getTime() - startedAt,
      });
      return true;
    } catch (cause) {
      writer?.abandon();
      await target.discard().catch(() => undefined);
      log.warn("building a tree index failed", { snapshot_id: snapshotId, error: String(cause) });
      return false;
    } finally {
      stopping.signal.removeEventListener("abort", onStop);
      signal?.removeEventListener("abort", onStop);
      buildDirs.delete(target.dir);
      writing.delete(key);
      for (const ended of current.ended) {
        ended();
      }
      await sweep(true);
    }
  };

  /**
   * `dir` from the build that is writing the snapshot's index: at once if the stream has passed
   * it, else once it does or the build ends, for at most buildWaitMs. Undefined: list directly.
   */
  const fromBuild = async (key: string, dir: string, after: string | undefined) => {
    const current = writing.get(key);
    if (current === undefined) {
      return undefined;
    }
    const closed = async () => {
      current.writer?.flush();
      const found = await runsOf(join(current.dir, DIRS_FILE), dir);
      return found === undefined ? undefined : pageOf(current.dir, dir, found, after);
    };
    try {
      const now = await closed();
      if (now !== undefined) {
        return now;
      }
      const woken = await new Promise<"closed" | "ended" | "waited">((resolve) => {
        const cancel = (options.timers ?? systemTimers).after(options.buildWaitMs ?? BUILD_WAIT_MS, () =>
          resolve("waited"),
        );
        const done = (why: "closed" | "ended") => {
          cancel();
          resolve(why);
        };
        const waiters = current.waiters.get(dir) ?? new Set();
        waiters.add(() => done("closed"));
        current.waiters.set(dir, waiters);
        current.ended.push(() => done("ended"));
      });
      if (woken === "closed") {
        return await closed();
      }
      return woken === "ended" ? await store.lookup(key, dir, after) : undefined;
    } catch {
      // The build ended and moved its directory while this read it: the index has it, or nobody.
      return store.lookup(key, dir, after).catch(() => undefined);
    }
  };

  const startBuild = (key: string, snapshotId: string, signal?: AbortSignal) => {
    if (builds.has(key) || builds.size >= maxBuilds || stopping.signal.aborted) {
      return;
    }
    const running = build(key, snapshotId, signal)
      .catch((cause) => {
        log.warn("building a tree index failed", { error: String(cause) });
        return false;
      })
      .finally(() => builds.delete(key));
    builds.set(key, running);
  };

  const listFolder = async (request: TreeList, path: string): Promise<TreeListResult> => {
    const repository = credentials.repository("repo");
    if (repository === undefined) {
      return { error: "no repository credentials have been pushed to this agent" };
    }
    const key = indexKey(repository.url, request.snapshot_id);
    await sweep();
    try {
      const fromIndex = await store.lookup(key, path, request.after);
      if (fromIndex !== undefined) {
        return fromIndex;
      }
    } catch (cause) {
      log.warn("reading a tree index failed; listing directly", { error: String(cause) });
    }
    const building = await fromBuild(key, path, request.after);
    if (building !== undefined) {
      return building;
    }
    const listing = await listDirectory({
      restic,
      repository,
      caps: credentials.hostCaps(),
      snapshotId: request.snapshot_id,
      dir: path,
      after: request.after,
      timeoutMs: listTimeoutMs,
      signal: stopping.signal,
    });
    if (listing.snapshotFound) {
      startBuild(key, request.snapshot_id);
    }
    return listing.reply;
  };

  return {
    async list(request) {
      const normalised = normaliseTreePath(request.path);
      if (!normalised.ok) {
        return { error: normalised.error };
      }
      const agentDirs = agentDirForms(options.agentDirs);
      const inside = meetAgentDirs(normalised.path, agentDirs).within;
      if (inside !== undefined) {
        return {
          error: `${normalised.path} is the agent's own directory ${inside} or lies inside it; its files are never listed`,
        };
      }
      return withoutAgentDirs(await listFolder(request, normalised.path), agentDirs);
    },
    async prebuild(snapshotId, signal, prebuildOptions) {
      const repository = credentials.repository("repo");
      if (repository === undefined || signal.aborted) {
        return undefined;
      }
      const key = indexKey(repository.url, snapshotId);
      try {
        // A browse of the new snapshot may already be building it: share that build.
        if (!builds.has(key) && !(await store.has(key))) {
          startBuild(key, snapshotId, signal);
        }
        const built = (await builds.get(key)) ?? (await store.has(key));
        if (built) {
          if (prebuildOptions?.pin !== false) {
            await store.pin(key);
          }
          return store.dirOf(key);
        }
      } catch (cause) {
        log.warn("pinning a tree index failed", { snapshot_id: snapshotId, error: String(cause) });
      }
      return undefined;
    },
    async idle() {
      await Promise.all([...builds.values()]);
    },
    async stop() {
      stopping.abort();
      await Promise.all([...builds.values()]);
    },
  };
}
