import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ProcessResult, ResticRunner } from "../restic/runner.js";
import { argsAfterSubcommand, type FixtureVersion, fixture, recordedScenario } from "../testing/job-run.js";
import { browserFor, lsReplay, names } from "../testing/tree-index.js";
import type { Timers } from "../time/timers.js";
import { parseLsLine } from "./ls-output.js";
import { indexKey, indexRootOf } from "./tree-browser.js";

/** The recordings list S1 of the recorded tree (the same path and snapshot in both versions' runs). */
const SNAPSHOT = recordedScenario("0.18.0").snapshots.S1.short_id;
const TREE = recordedScenario("0.18.0").tree;

/** A promise, and the function that fulfils it. */
function settleable(): { promise: Promise<void>; settle: () => void } {
  let settle = () => {};
  const promise = new Promise<void>((resolve) => {
    settle = resolve;
  });
  return { promise, settle };
}

/**
 * The full listing (the index build) streams the recorded lines past `${TREE}/docs`'s subtree,
 * then holds until `release()`: a build caught half-way.
 */
function pausedBuild(version: FixtureVersion) {
  const held = settleable();
  const paused = settleable();
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
      paused.settle();
      await held.promise;
      for (const text of lines.slice(cut + 1)) {
        spec.onLine({ stream: "stdout", text });
      }
      return { kind: "exited", exitCode: 0, signal: null, cancelled: false, timedOut: false };
    },
  });
  return { wrap, release: held.settle, paused: paused.promise };
}

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
