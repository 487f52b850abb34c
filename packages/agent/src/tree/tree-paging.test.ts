/**
 * Paging a huge directory against real restic 0.18 and 0.14: a snapshot with a folder of 20,000
 * children (in restic's order) and one of 9,000 whose names restic's byte order and our UTF-16
 * order disagree on. Both the one-directory listing and the index answer page after page, and the
 * pages add up to exactly the full sorted list.
 */
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TreeListResult } from "@fleetback/protocol";
import { beforeAll, describe, expect, it } from "vitest";
import { createCredentialStore } from "../restic/credential-store.js";
import { createRestic, type Restic } from "../restic/restic.js";
import { createSpawnRunner } from "../restic/spawn-adapter.js";
import { createMemoryLogger } from "../testing/memory-logger.js";
import { RESTIC_VERSIONS, resticBinary, resticNote } from "../testing/tools.js";
import { systemClock } from "../time/clock.js";
import { createTreeBrowser, type TreeBrowser } from "./tree-browser.js";
import { compareNames } from "./tree-page.js";

const PASSWORD = "tree-paging-pw";
const BIG = Array.from({ length: 20_000 }, (_, i) => `${String(i).padStart(5, "0")}-café.eml`);
// U+FF01 sorts after an astral character in UTF-16 and before it in UTF-8 bytes.
const ODD = [
  ...Array.from({ length: 9_000 }, (_, i) => `m${String(i).padStart(4, "0")}-${"x".repeat(40)}`),
  "m\u{1F600}",
  "m\uFF01",
  "M-upper",
];

async function sourceTree(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "fleetback-paging-src-"));
  for (const [dir, names] of [
    ["big", BIG],
    ["odd", ODD],
  ] as const) {
    await mkdir(join(root, dir));
    for (let i = 0; i < names.length; i += 500) {
      await Promise.all(names.slice(i, i + 500).map((name) => writeFile(join(root, dir, name), "")));
    }
  }
  return root;
}

async function runOk(restic: Restic, repository: { url: string; password: string }, args: string[]) {
  const lines: string[] = [];
  const result = await restic.run({
    subcommand: args[0] ?? "",
    args: args.slice(1),
    repository,
    json: args[0] === "snapshots",
    onLine: (line) => lines.push(line.text),
    timeoutMs: 120_000,
  });
  expect(result.kind === "exited" && result.exitCode === 0, lines.slice(-5).join("\n")).toBe(true);
  return lines;
}

async function allPages(browser: TreeBrowser, snapshot: string, path: string) {
  const pages: TreeListResult[] = [];
  const millis: number[] = [];
  let after: string | undefined;
  do {
    const started = performance.now();
    const page = await browser.list({ snapshot_id: snapshot, path, ...(after ? { after } : {}) });
    millis.push(performance.now() - started);
    expect(page.error).toBeUndefined();
    pages.push(page);
    after = page.next_after;
    expect(pages.length).toBeLessThan(50);
  } while (after !== undefined);
  return { pages, millis, names: pages.flatMap((page) => page.entries?.map((entry) => entry.name) ?? []) };
}

describe.each(RESTIC_VERSIONS)("restic %s", (version) => {
  const binary = resticBinary(version) ?? "";

  describe.skipIf(binary === "")(`paging a folder of 20,000 children${resticNote(version)}`, () => {
    let source = "";
    let stateDir = "";
    let restic: Restic;
    let snapshot = "";
    const repository = { url: "", password: PASSWORD };

    let runs = 0;
    const browserOf = (maxBuilds?: number) => {
      const credentials = createCredentialStore();
      credentials.setRepository("repo", repository);
      const counted: Restic = {
        command: restic.command,
        run: (request) => {
          runs += 1;
          return restic.run(request);
        },
      };
      return createTreeBrowser({
        restic: counted,
        credentials,
        stateDir,
        agentDirs: [stateDir],
        clock: systemClock,
        log: createMemoryLogger(),
        ...(maxBuilds === undefined ? {} : { maxBuilds }),
      });
    };

    beforeAll(async () => {
      source = await sourceTree();
      stateDir = await mkdtemp(join(tmpdir(), "fleetback-paging-state-"));
      repository.url = join(await mkdtemp(join(tmpdir(), "fleetback-paging-repo-")), "repo");
      restic = createRestic({ runner: createSpawnRunner(), command: binary, stateDir, parentEnv: {} });
      await runOk(restic, repository, ["init"]);
      await runOk(restic, repository, ["backup", "--tag", "paging", source]);
      const [listed] = JSON.parse((await runOk(restic, repository, ["snapshots"])).join("")) as {
        id: string;
      }[];
      snapshot = listed?.id ?? "";
    }, 180_000);

    it("the one-directory listing pages through both folders", async () => {
      const browser = browserOf(0);
      const big = await allPages(browser, snapshot, join(source, "big"));
      expect(big.pages.length).toBeGreaterThanOrEqual(3);
      expect(big.names).toEqual([...BIG].sort(compareNames));
      const odd = await allPages(browser, snapshot, join(source, "odd"));
      expect(odd.pages.length).toBe(2);
      expect(odd.names).toEqual([...ODD].sort(compareNames));
    }, 120_000);

    it("the index pages through both folders without running restic again", async () => {
      const browser = browserOf();
      await browser.list({ snapshot_id: snapshot, path: source });
      await browser.idle();
      const before = runs;
      const big = await allPages(browser, snapshot, join(source, "big"));
      expect(big.names).toEqual([...BIG].sort(compareNames));
      expect(big.pages.at(-1)?.next_after).toBeUndefined();
      const odd = await allPages(browser, snapshot, join(source, "odd"));
      expect(odd.names).toEqual([...ODD].sort(compareNames));
      expect(new Set(odd.names).size).toBe(ODD.length);
      expect(runs).toBe(before);
      await browser.stop();
    }, 120_000);
  });
});
