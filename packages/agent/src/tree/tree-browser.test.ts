import { mkdtemp, readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createCredentialStore } from "../restic/credential-store.js";
import { createReplayRunner } from "../restic/replay-adapter.js";
import { createRestic } from "../restic/restic.js";
import { argsAfterSubcommand, fixture, recordedScenario } from "../testing/job-run.js";
import { createMemoryLogger } from "../testing/memory-logger.js";
import { browserFor, lsReplay, names } from "../testing/tree-index.js";
import { systemClock } from "../time/clock.js";
import { parseLsLine } from "./ls-output.js";
import { createTreeBrowser, indexRootOf } from "./tree-browser.js";
import { parentOf } from "./tree-path.js";

const VERSIONS = ["0.14.0", "0.18.0"] as const;
/** The recordings list S1 of the recorded tree (the same path and snapshot in both versions' runs). */
const SNAPSHOT = recordedScenario("0.18.0").snapshots.S1.short_id;
const TREE = recordedScenario("0.18.0").tree;

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
