/**
 * @module testing/tree-index
 * For the tests under tree/: tree indexes written by the real writer, made-up snapshots (one per
 * tag, host and hour, with an id that tells them apart and encodes the hour), and a tree browser
 * whose restic replays the recorded `restic ls` of the recorded tree.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Snapshot, TreeEntry } from "@fleetback/protocol";
import { createCredentialStore } from "../restic/credential-store.js";
import { createReplayRunner, type Recording } from "../restic/replay-adapter.js";
import { createRestic } from "../restic/restic.js";
import type { ProcessSpec, ResticRunner } from "../restic/runner.js";
import { systemClock } from "../time/clock.js";
import type { Timers } from "../time/timers.js";
import { createIndexWriter } from "../tree/index-writer.js";
import { createTreeBrowser } from "../tree/tree-browser.js";
import { argsAfterSubcommand, type FixtureVersion, fixture, recordedScenario } from "./job-run.js";
import { createMemoryLogger } from "./memory-logger.js";

/**
 * Writes `nodes` as a tree index into `dir` (a fresh temp dir when absent) and returns the dir. The
 * nodes go in as given: restic's depth-first order, as a backup's prebuild writes them.
 */
export async function writeIndex(nodes: TreeEntry[], dir?: string): Promise<string> {
  const target = dir ?? (await mkdtemp(join(tmpdir(), "fleetback-index-")));
  const writer = createIndexWriter(target);
  for (const entry of nodes) {
    writer.add(entry);
  }
  writer.finish();
  return target;
}

const TAG_CODES = ["docs", "mail", "logs"];

/**
 * Snapshot `n` of `tag` by `hostname`, n hours into 2026-03-01. Its id starts with the tag's code,
 * the host name's last character and `n` in two digits (characters 2-3), so a test can read `n`
 * back from it.
 */
export function groupSnapshot(n: number, tag = "docs", hostname = "web1"): Snapshot {
  const code = TAG_CODES.indexOf(tag) + 1;
  if (code === 0) {
    throw new Error(`no id code for tag ${tag}; add it to TAG_CODES`);
  }
  const id = `${code}${hostname.slice(-1)}${String(n).padStart(2, "0")}`.padEnd(64, "a");
  return {
    id,
    short_id: id.slice(0, 8),
    time: new Date(Date.UTC(2026, 2, 1, n)).toISOString(),
    hostname,
    paths: ["/srv"],
    tags: [tag],
    size_bytes: 0,
    file_count: 0,
  };
}

/** As restic/snapshots-report.ts hands them: newest first. */
export function newestFirst(snapshots: Snapshot[]): Snapshot[] {
  return [...snapshots].sort((a, b) => Date.parse(b.time) - Date.parse(a.time));
}

/** The recordings list S1 of this tree (the same path and snapshot in both versions' runs). */
const LISTED_TREE = recordedScenario("0.18.0").tree;

/** Replays the recorded ls outputs by the directory asked for. */
export function lsReplay(version: FixtureVersion) {
  return (spec: ProcessSpec): Recording => {
    const [, , dir] = argsAfterSubcommand(spec.args);
    switch (dir) {
      case undefined:
        return fixture(version, "ls-whole");
      case "/":
        return fixture(version, "ls-root");
      case `${LISTED_TREE}/docs`:
        return fixture(version, "ls-dir");
      case `${LISTED_TREE}/docs/readme.txt`:
        return fixture(version, "ls-file");
      default:
        return fixture(version, "ls-nonexistent-path");
    }
  };
}

/** A tree browser over its own fresh state dir, whose restic is `replay` (through `wrap`, if given). */
export async function browserFor(
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

/** The names of a tree.list answer's entries, in its order. */
export const names = (result: { entries?: TreeEntry[] }) => result.entries?.map((entry) => entry.name);
