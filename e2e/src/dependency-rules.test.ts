/**
 * The dependency rules `pnpm lint` runs (.dependency-cruiser.cjs) bite: each rule, run by the real
 * depcruise on a small tree laid out like ours, fails on the import it forbids and passes the same
 * tree without it. Without this a typo in a rule's path pattern would silently allow everything.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { repoRoot } from "./support/paths.js";

const temps: string[] = [];
afterAll(() => {
  for (const dir of temps) {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A tree with our config and these files (path → source), cruised as `pnpm lint` cruises ours. */
function cruise(files: Record<string, string>): { status: number | null; output: string } {
  const dir = mkdtempSync(join(tmpdir(), "fleetback-deps-"));
  temps.push(dir);
  copyFileSync(join(repoRoot, ".dependency-cruiser.cjs"), join(dir, ".dependency-cruiser.cjs"));
  copyFileSync(join(repoRoot, "tsconfig.base.json"), join(dir, "tsconfig.base.json"));
  for (const [path, source] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), source);
  }
  const run = spawnSync(
    join(repoRoot, "node_modules", ".bin", "depcruise"),
    ["packages", "--config", ".dependency-cruiser.cjs", "--output-type", "err"],
    { cwd: dir, encoding: "utf8" },
  );
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

const S = "packages/server/src";
const leaf = "export const value = 1;\n";
const importing = (path: string) => `import { value } from "${path}";\nexport const other = value;\n`;

describe("dependency rules", () => {
  it("pass a tree that keeps them", () => {
    const run = cruise({
      [`${S}/app.ts`]: importing("./routes/hosts.js"),
      [`${S}/routes/hosts.ts`]: importing("../hosts/host-detail.js"),
      [`${S}/hosts/host-detail.ts`]: importing("../http/render.js"),
      [`${S}/http/render.ts`]: leaf,
      "packages/agent/src/agent.ts": leaf,
    });
    expect(run.output).toContain("no dependency violations found (5 modules, 3 dependencies cruised)");
    expect(run.status).toBe(0);
  });

  it.each([
    ["no-circular", { [`${S}/jobs/a.ts`]: importing("./b.js"), [`${S}/jobs/b.ts`]: importing("./a.js") }],
    [
      "http-imports-no-domain",
      { [`${S}/http/render.ts`]: importing("../auth/actor.js"), [`${S}/auth/actor.ts`]: leaf },
    ],
    [
      "routes-import-no-socket-layer",
      {
        [`${S}/routes/hosts.ts`]: importing("../agent-channel/hello.js"),
        [`${S}/agent-channel/hello.ts`]: leaf,
      },
    ],
    [
      "routes-import-no-other-route",
      { [`${S}/routes/diff.ts`]: importing("./restore.js"), [`${S}/routes/restore.ts`]: leaf },
    ],
    [
      "domain-imports-no-routes",
      { [`${S}/sources/runs.ts`]: importing("../routes/hosts.js"), [`${S}/routes/hosts.ts`]: leaf },
    ],
    [
      "packages-only-through-public-entry",
      {
        "packages/agent/src/agent.ts": importing("../../protocol/src/messages.js"),
        "packages/protocol/src/messages.ts": leaf,
      },
    ],
    ["not-to-unresolvable", { [`${S}/jobs/a.ts`]: importing("./missing.js") }],
  ])("fail on %s", (rule, files) => {
    const run = cruise(files);
    expect(run.status).not.toBe(0);
    expect(run.output).toContain(`error ${rule}:`);
  });
});

/** scripts/check-folder-cycles.mjs run on a tree with these files and, if given, this known list. */
function folderCycles(
  files: Record<string, string>,
  known?: string[],
): { status: number | null; output: string } {
  const dir = mkdtempSync(join(tmpdir(), "fleetback-folders-"));
  temps.push(dir);
  copyFileSync(join(repoRoot, ".dependency-cruiser.cjs"), join(dir, ".dependency-cruiser.cjs"));
  copyFileSync(join(repoRoot, "tsconfig.base.json"), join(dir, "tsconfig.base.json"));
  const all = known ? { ...files, "scripts/folder-cycles-known.json": JSON.stringify(known) } : files;
  for (const [path, source] of Object.entries(all)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), source);
  }
  const run = spawnSync(process.execPath, [join(repoRoot, "scripts", "check-folder-cycles.mjs"), dir], {
    encoding: "utf8",
  });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

// Three folders in a loop although no module is in one: a/x → b/y → c/z → a/w.
const A = "packages/agent/src";
const loop = {
  [`${S}/jobs/x.ts`]: importing("../keepers/y.js"),
  [`${S}/keepers/y.ts`]: importing("../snapshots/z.js"),
  [`${S}/snapshots/z.ts`]: importing("../jobs/w.js"),
  [`${S}/jobs/w.ts`]: leaf,
};
const loopEdges = [
  `${S}/jobs -> ${S}/keepers`,
  `${S}/keepers -> ${S}/snapshots`,
  `${S}/snapshots -> ${S}/jobs`,
];

describe("folder cycles", () => {
  it("pass folders that import one way, and test files that import back", () => {
    const run = folderCycles({
      [`${A}/jobs/backup.ts`]: importing("../restic/output.js"),
      [`${A}/restic/output.ts`]: leaf,
      [`${A}/restic/output.test.ts`]: importing("../jobs/backup.js"),
    });
    expect(run.output).toContain("no folder cycles beyond the known ones");
    expect(run.status).toBe(0);
  });

  it("fail on two folders of the agent that import each other, even when no module is in a cycle", () => {
    const run = folderCycles({
      [`${A}/jobs/backup.ts`]: importing("../restic/output.js"),
      [`${A}/restic/output.ts`]: leaf,
      [`${A}/restic/guard.ts`]: importing("../jobs/types.js"),
      [`${A}/jobs/types.ts`]: leaf,
    });
    expect(run.output).toContain(`folder cycle: ${A}/jobs and ${A}/restic import each other`);
    expect(run.status).toBe(1);
  });

  it("fail on a pair of server folders even when the known list names both edges", () => {
    const run = folderCycles(
      {
        [`${S}/hosts/a.ts`]: importing("../jobs/b.js"),
        [`${S}/jobs/b.ts`]: importing("../hosts/c.js"),
        [`${S}/hosts/c.ts`]: leaf,
      },
      [`${S}/hosts -> ${S}/jobs`, `${S}/jobs -> ${S}/hosts`],
    );
    expect(run.output).toContain(`folder cycle: ${S}/hosts and ${S}/jobs import each other`);
    expect(run.status).toBe(1);
  });

  it("fail on a longer loop that the known list does not hold", () => {
    const run = folderCycles(loop, loopEdges.slice(0, 2));
    expect(run.output).toContain(`folder cycle: ${S}/snapshots -> ${S}/jobs closes a loop of folders`);
    expect(run.output).not.toContain(`${S}/jobs -> ${S}/keepers closes`);
    expect(run.status).toBe(1);
  });

  it("pass a known loop, and fail once a known edge no longer loops so the list only shrinks", () => {
    expect(folderCycles(loop, loopEdges).status).toBe(0);
    const untied = { ...loop, [`${S}/snapshots/z.ts`]: leaf };
    const run = folderCycles(untied, loopEdges);
    expect(run.output).toContain(`folder cycle: ${S}/snapshots -> ${S}/jobs no longer loops`);
    expect(run.status).toBe(1);
  });
});
