import { mkdtemp, readdir, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TreeEntry } from "@fleetback/protocol";
import { describe, expect, it } from "vitest";
import { createCredentialStore } from "../restic/credential-store.js";
import { createReplayRunner, type Recording } from "../restic/replay-adapter.js";
import { createRestic } from "../restic/restic.js";
import type { ProcessResult, ProcessSpec, ResticRunner } from "../restic/runner.js";
import { argsAfterSubcommand, fixture, recordedScenario } from "../testing/job-run.js";
import { createMemoryLogger } from "../testing/memory-logger.js";
import { systemClock } from "../time/clock.js";
import type { Timers } from "../time/timers.js";
import { parseLsLine } from "./ls-output.js";
import { createTreeBrowser, indexKey, indexRootOf } from "./tree-browser.js";
import { parentOf } from "./tree-path.js";

const VERSIONS = ["0.14.0", "0.18.0"] as const;
/** The recordings list S1 of the recorded tree (the same path and snapshot in both versions' runs). */
const SNAPSHOT = recordedScenario("0.18.0").snapshots.S1.short_id;
const TREE = recordedScenario("0.18.0").tree;

/** Replays the recorded ls outputs by the directory asked for. */
function lsReplay(version: (typeof VERSIONS)[number]) {
  return (spec: ProcessSpec): Recording => {
    const [, , dir] = argsAfterSubcommand(spec.args);
    switch (dir) {
      case undefined:
        return fixture(version, "ls-whole");
      case "/":
        return fixture(version, "ls-root");
      case `${TREE}/docs`:
        return fixture(version, "ls-dir");
      case `${TREE}/docs/readme.txt`:
        return fixture(version, "ls-file");
      default:
        return fixture(version, "ls-nonexistent-path");
    }
  };
}

async function browserFor(
  replay: (spec: ProcessSpec) => Recording,
  url = "/srv/repo",
  options: {
    buildWaitMs?: number;
    timers?: Timers;
    wrap?: (runner: ResticRunner) => ResticRunner;
    agentDirs?: string[];
  } = {},
) {
  const stateDir = await mkdtemp(join(tmpdir(), "fleetback-tree-"));
  const runner = createReplayRunner(replay);
  const used = options.wrap?.(runner) ?? runner;
  const restic = createRestic({ runner: used, command: "restic", stateDir, parentEnv: {} });
  const credentials = createCredentialStore();
  credentials.setRepository("repo", { url, password: "tree-test-pw" });
  const log = createMemoryLogger();
  const browser = createTreeBrowser({
    restic,
    credentials,
    stateDir,
    agentDirs: options.agentDirs ?? [stateDir],
    clock: systemClock,
    log,
    buildWaitMs: options.buildWaitMs,
    ...(options.timers ? { timers: options.timers } : {}),
  });
  return { browser, runner, stateDir, log };
}

/**
 * The full listing (the index build) streams the recorded lines past `${TREE}/docs`'s subtree,
 * then holds until `release()`: a build caught half-way.
 */
function pausedBuild(version: (typeof VERSIONS)[number]) {
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let reachedPause = () => {};
  const paused = new Promise<void>((resolve) => {
    reachedPause = resolve;
  });
  const wrap = (replay: ResticRunner): ResticRunner => ({
    async run(spec): Promise<ProcessResult> {
      if (argsAfterSubcommand(spec.args).length !== 2 || spec.args.includes("version")) {
        return replay.run(spec);
      }
      const lines = fixture(version, "ls-whole")
        .stdout.split("\n")
        .filter((line) => line !== "");
      const docs = `${TREE}/docs`;
      const pathOf = (line: string) => {
        const parsed = parseLsLine(line);
        return parsed.kind === "node" ? parsed.entry.path : undefined;
      };
      const start = lines.findIndex((line) => pathOf(line) === docs);
      // The first node after the subtree: restic's next line is what closes the folder.
      const cut = lines.findIndex((line, index) => {
        const path = pathOf(line);
        return index > start && path !== undefined && !path.startsWith(`${docs}/`);
      });
      for (const text of lines.slice(0, cut + 1)) {
        spec.onLine({ stream: "stdout", text });
      }
      reachedPause();
      await held;
      for (const text of lines.slice(cut + 1)) {
        spec.onLine({ stream: "stdout", text });
      }
      return { kind: "exited", exitCode: 0, signal: null, cancelled: false, timedOut: false };
    },
  });
  return { wrap, release, paused };
}

const names = (result: { entries?: TreeEntry[] }) => result.entries?.map((entry) => entry.name);

describe.each(VERSIONS)("tree.list on recorded restic %s", (version) => {
  it("lists one directory directly, then builds the index and answers from it", async () => {
    const { browser, runner, stateDir } = await browserFor(lsReplay(version));
    const first = await browser.list({ snapshot_id: SNAPSHOT, path: `${TREE}/docs/sub/..` });
    expect(first).toEqual({
      entries: [
        expect.objectContaining({ name: "notes.md", path: `${TREE}/docs/notes.md`, type: "file", size: 15 }),
        expect.objectContaining({
          name: "readme.txt",
          type: "file",
          size: 13,
          mtime: "2024-01-02T03:04:05.000Z",
        }),
        expect.objectContaining({ name: "sub", path: `${TREE}/docs/sub`, type: "dir", size: 0 }),
      ],
    });
    const direct = runner.calls.find((call) => argsAfterSubcommand(call.args).length === 3);
    expect(argsAfterSubcommand(direct?.args ?? [])).toEqual(["--no-lock", SNAPSHOT, `${TREE}/docs`]);
    expect(direct?.args).toContain("--json");
    await browser.idle();
    expect(runner.calls.map((call) => argsAfterSubcommand(call.args).length).sort()).toEqual([2, 3]);
    expect(await readdir(indexRootOf(stateDir))).toHaveLength(1);

    const before = runner.calls.length;
    expect(await browser.list({ snapshot_id: SNAPSHOT, path: `${TREE}/docs` })).toEqual(first);
    expect(names(await browser.list({ snapshot_id: SNAPSHOT, path: TREE }))).toEqual([
      "data",
      "docs",
      "empty",
      "file with space.txt",
      "link-to-readme",
    ]);
    expect(await browser.list({ snapshot_id: SNAPSHOT, path: `${TREE}/empty` })).toEqual({ entries: [] });
    expect(await browser.list({ snapshot_id: SNAPSHOT, path: `${TREE}/docs/readme.txt` })).toEqual({
      error: `not a directory: ${TREE}/docs/readme.txt`,
    });
    expect(await browser.list({ snapshot_id: SNAPSHOT, path: `${TREE}/nope` })).toEqual({
      error: `no such directory in the snapshot: ${TREE}/nope`,
    });
    expect(runner.calls.length).toBe(before);
  });

  it("the index gives every directory the same children as filtering the full listing", async () => {
    const { browser } = await browserFor(lsReplay(version));
    await browser.list({ snapshot_id: SNAPSHOT, path: "/" });
    await browser.idle();
    const nodes = fixture(version, "ls-whole")
      .stdout.split("\n")
      .map(parseLsLine)
      .flatMap((line) => (line.kind === "node" ? [line.entry] : []));
    const dirs = new Set(nodes.map((node) => parentOf(node.path)));
    expect(dirs.size).toBeGreaterThan(5);
    for (const dir of dirs) {
      const expected = nodes
        .filter((node) => parentOf(node.path) === dir)
        .map(({ name, type, size, mtime }) => ({ name, type, size, mtime }))
        .sort((a, b) => (a.name < b.name ? -1 : 1));
      const result = await browser.list({ snapshot_id: SNAPSHOT, path: dir });
      expect(result.entries?.map(({ name, type, size, mtime }) => ({ name, type, size, mtime }))).toEqual(
        expected,
      );
    }
  });

  it("a file, a missing path and a missing snapshot come back as errors, and build nothing for the last", async () => {
    const { browser, runner } = await browserFor(lsReplay(version));
    expect(await browser.list({ snapshot_id: SNAPSHOT, path: `${TREE}/docs/readme.txt` })).toEqual({
      error: `not a directory: ${TREE}/docs/readme.txt`,
    });
    const missing = await browserFor(lsReplay(version));
    expect(await missing.browser.list({ snapshot_id: SNAPSHOT, path: `${TREE}/nope` })).toEqual({
      error: `no such directory in the snapshot: ${TREE}/nope`,
    });
    const bad = await browserFor(() => fixture(version, "ls-bad-snapshot"));
    expect(await bad.browser.list({ snapshot_id: "deadbeef", path: "/" })).toEqual({
      error:
        version === "0.14.0"
          ? 'Ignoring "deadbeef": no matching ID found for prefix "deadbeef"'
          : 'no matching ID found for prefix "deadbeef"',
    });
    await bad.browser.idle();
    expect(bad.runner.calls).toHaveLength(1);
    await browser.idle();
    expect(runner.calls).toHaveLength(2);
  });
});

describe("tree.list while the index is being built", () => {
  it("answers a folder the build's stream has passed from the part written, without a second restic", async () => {
    const build = pausedBuild("0.18.0");
    // A list that waits for the build says so by starting its wait, which never runs out by itself.
    let waits = 0;
    let waitStarted = () => {};
    const listWaits = new Promise<void>((resolve) => {
      waitStarted = resolve;
    });
    const timers: Timers = {
      after() {
        waits += 1;
        waitStarted();
        return () => {};
      },
      every() {
        throw new Error("the tree browser sets no interval on these timers");
      },
    };
    const { browser, runner } = await browserFor(lsReplay("0.18.0"), "/srv/repo", {
      wrap: build.wrap,
      timers,
    });
    const first = await browser.list({ snapshot_id: SNAPSHOT, path: `${TREE}/docs` });
    await build.paused;
    const direct = () => runner.calls.filter((call) => argsAfterSubcommand(call.args).length === 3).length;
    const before = direct();
    expect(await browser.list({ snapshot_id: SNAPSHOT, path: `${TREE}/docs` })).toEqual(first);
    expect(direct()).toBe(before);

    // The tree's own folder closes only at the stream's end: it waits for the build, then reads the index.
    expect(waits).toBe(0);
    const waiting = browser.list({ snapshot_id: SNAPSHOT, path: TREE });
    await listWaits;
    build.release();
    expect(names(await waiting)).toEqual(["data", "docs", "empty", "file with space.txt", "link-to-readme"]);
    expect(direct()).toBe(before);
    await browser.idle();
  });

  it("lists directly when the build has not passed the folder within the wait", async () => {
    const build = pausedBuild("0.18.0");
    const { browser, runner } = await browserFor(lsReplay("0.18.0"), "/srv/repo", {
      wrap: build.wrap,
      buildWaitMs: 30,
    });
    const first = await browser.list({ snapshot_id: SNAPSHOT, path: `${TREE}/docs` });
    await build.paused;
    const before = runner.calls.filter((call) => argsAfterSubcommand(call.args).length === 3).length;
    // "/" closes only at the end of the stream, which is held: after the wait, restic lists it.
    expect(await browser.list({ snapshot_id: SNAPSHOT, path: "/" })).toEqual(
      expect.objectContaining({ entries: expect.any(Array) }),
    );
    expect(runner.calls.filter((call) => argsAfterSubcommand(call.args).length === 3).length).toBe(
      before + 1,
    );
    build.release();
    await browser.idle();
    expect(await browser.list({ snapshot_id: SNAPSHOT, path: `${TREE}/docs` })).toEqual(first);
  });
});

describe("the index built after a backup", () => {
  it("answers even the first folder from the index, with no restic at browse time, and is pinned", async () => {
    const { browser, runner, stateDir } = await browserFor(lsReplay("0.18.0"));
    const indexDir = await browser.prebuild(SNAPSHOT, new AbortController().signal);
    expect(runner.calls.map((call) => argsAfterSubcommand(call.args))).toEqual([["--no-lock", SNAPSHOT]]);
    expect((await readdir(indexRootOf(stateDir))).sort()).toEqual([
      expect.stringMatching(/^[0-9a-f]{32}$/),
      "pinned",
    ]);
    // The file catalogue reads the pinned index whole from there.
    expect(indexDir).toBe(join(indexRootOf(stateDir), indexKey("/srv/repo", SNAPSHOT)));
    const before = runner.calls.length;
    expect(names(await browser.list({ snapshot_id: SNAPSHOT, path: `${TREE}/docs` }))).toEqual([
      "notes.md",
      "readme.txt",
      "sub",
    ]);
    expect(runner.calls.length).toBe(before);
    // A second call finds the index and starts nothing.
    expect(await browser.prebuild(SNAPSHOT, new AbortController().signal)).toBe(indexDir);
    expect(runner.calls.length).toBe(before);
  });

  it("builds without pinning when asked (the catalogue's catch-up), keeping the pin where it was", async () => {
    const { browser, stateDir } = await browserFor(lsReplay("0.18.0"));
    const root = indexRootOf(stateDir);
    // The replay lists the same tree for any id: another snapshot's index.
    const older = recordedScenario("0.18.0").snapshots.S2.short_id;
    await browser.prebuild(SNAPSHOT, new AbortController().signal);
    const olderDir = await browser.prebuild(older, new AbortController().signal, { pin: false });
    expect(olderDir).toBe(join(root, indexKey("/srv/repo", older)));
    expect((await readdir(root)).sort()).toEqual(
      [indexKey("/srv/repo", SNAPSHOT), indexKey("/srv/repo", older), "pinned"].sort(),
    );
    expect(await readFile(join(root, "pinned"), "utf8")).toBe(indexKey("/srv/repo", SNAPSHOT));
  });

  it("a build stopped by its signal (the next job) leaves no index", async () => {
    const held = pausedBuild("0.18.0");
    const { browser, stateDir } = await browserFor(lsReplay("0.18.0"), "/srv/repo", {
      wrap: (replay) => {
        const paused = held.wrap(replay);
        return {
          run: (spec) => {
            // The replay ignores signals; a real restic ends when its signal aborts.
            spec.signal?.addEventListener("abort", held.release);
            return paused
              .run(spec)
              .then((result) =>
                spec.signal?.aborted
                  ? { ...result, exitCode: null, signal: "SIGINT", cancelled: true }
                  : result,
              );
          },
        };
      },
    });
    const next = new AbortController();
    const building = browser.prebuild(SNAPSHOT, next.signal);
    await held.paused;
    next.abort();
    expect(await building).toBeUndefined();
    expect(await readdir(indexRootOf(stateDir))).toEqual([]);
  });
});

describe("tree.list requests", () => {
  it("refuses escapes and relative paths without running restic", async () => {
    const { browser, runner } = await browserFor(lsReplay("0.18.0"));
    expect(await browser.list({ snapshot_id: SNAPSHOT, path: "/srv/../../etc" })).toEqual({
      error: 'path "/srv/../../etc" leads above /',
    });
    expect(runner.calls).toHaveLength(0);
  });

  it("never lists the agent's own directories: a folder inside one is refused, its entry left out (issue 33)", async () => {
    const agentDir = `${TREE}/docs/sub`;
    const { browser, runner } = await browserFor(lsReplay("0.18.0"), "/srv/repo", { agentDirs: [agentDir] });
    expect(names(await browser.list({ snapshot_id: SNAPSHOT, path: `${TREE}/docs` }))).toEqual([
      "notes.md",
      "readme.txt",
    ]);
    await browser.idle();
    const before = runner.calls.length;
    for (const path of [agentDir, `${agentDir}/deep.txt`, `${agentDir}/x/..`]) {
      expect(await browser.list({ snapshot_id: SNAPSHOT, path })).toEqual({
        error: `${path.replace("/x/..", "")} is the agent's own directory ${agentDir} or lies inside it; its files are never listed`,
      });
    }
    expect(runner.calls).toHaveLength(before);
    // From the index too.
    expect(names(await browser.list({ snapshot_id: SNAPSHOT, path: `${TREE}/docs` }))).toEqual([
      "notes.md",
      "readme.txt",
    ]);
    expect(runner.calls).toHaveLength(before);
  });

  it("without credentials says so", async () => {
    const stateDir = await mkdtemp(join(tmpdir(), "fleetback-tree-"));
    const runner = createReplayRunner(lsReplay("0.18.0"));
    const browser = createTreeBrowser({
      restic: createRestic({ runner, command: "restic", stateDir, parentEnv: {} }),
      credentials: createCredentialStore(),
      stateDir,
      agentDirs: [stateDir],
      clock: systemClock,
      log: createMemoryLogger(),
    });
    expect(await browser.list({ snapshot_id: SNAPSHOT, path: "/" })).toEqual({
      error: "no repository credentials have been pushed to this agent",
    });
  });

  it("concurrent requests for one snapshot share one index build", async () => {
    const { browser, runner } = await browserFor(lsReplay("0.18.0"));
    await Promise.all([
      browser.list({ snapshot_id: SNAPSHOT, path: "/" }),
      browser.list({ snapshot_id: SNAPSHOT, path: `${TREE}/docs` }),
      browser.list({ snapshot_id: SNAPSHOT, path: TREE }),
    ]);
    await browser.idle();
    expect(runner.calls.filter((call) => argsAfterSubcommand(call.args).length === 2)).toHaveLength(1);
  });

  it("a different repository does not reuse the index", async () => {
    const { browser, runner, stateDir } = await browserFor(lsReplay("0.18.0"));
    await browser.list({ snapshot_id: SNAPSHOT, path: "/" });
    await browser.idle();
    const other = createTreeBrowser({
      restic: createRestic({ runner, command: "restic", stateDir, parentEnv: {} }),
      credentials: (() => {
        const store = createCredentialStore();
        store.setRepository("repo", { url: "/srv/other-repo", password: "x" });
        return store;
      })(),
      stateDir,
      agentDirs: [stateDir],
      clock: systemClock,
      log: createMemoryLogger(),
    });
    const before = runner.calls.length;
    await other.list({ snapshot_id: SNAPSHOT, path: "/" });
    expect(runner.calls.length).toBeGreaterThan(before);
    await other.idle();
  });
});
