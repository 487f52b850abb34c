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

/** .dependency-cruiser-folders.cjs cruised over a tree with these files, as `pnpm lint` runs it. */
function folderCycles(files: Record<string, string>): { status: number | null; output: string } {
  const dir = mkdtempSync(join(tmpdir(), "fleetback-folders-"));
  temps.push(dir);
  for (const config of [".dependency-cruiser.cjs", ".dependency-cruiser-folders.cjs", "tsconfig.base.json"]) {
    copyFileSync(join(repoRoot, config), join(dir, config));
  }
  for (const [path, source] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), source);
  }
  const roots = ["packages/server/src", "packages/agent/src"].filter((root) =>
    Object.keys(files).some((path) => path.startsWith(root)),
  );
  const run = spawnSync(
    join(repoRoot, "node_modules", ".bin", "depcruise"),
    [...roots, "--config", ".dependency-cruiser-folders.cjs", "--output-type", "err"],
    { cwd: dir, encoding: "utf8" },
  );
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

const A = "packages/agent/src";

describe("folder cycles", () => {
  it("pass folders that import one way, and test files that import back", () => {
    const run = folderCycles({
      [`${A}/jobs/backup.ts`]: importing("../restic/output.js"),
      [`${A}/restic/output.ts`]: leaf,
      [`${A}/restic/output.test.ts`]: importing("../jobs/backup.js"),
    });
    expect(run.output).toContain("no dependency violations found");
    expect(run.status).toBe(0);
  });

  it("fail on two folders of the agent that import each other, even when no module is in a cycle", () => {
    const run = folderCycles({
      [`${A}/jobs/backup.ts`]: importing("../restic/output.js"),
      [`${A}/restic/output.ts`]: leaf,
      [`${A}/restic/guard.ts`]: importing("../jobs/types.js"),
      [`${A}/jobs/types.ts`]: leaf,
    });
    expect(run.output).toContain(`error folders-no-cycles: ${A}/jobs`);
    expect(run.output).toContain(`${A}/restic`);
    expect(run.status).not.toBe(0);
  });

  it("fail on a longer loop of server folders: a/x → b/y → c/z → a/w", () => {
    const run = folderCycles({
      [`${S}/jobs/x.ts`]: importing("../keepers/y.js"),
      [`${S}/keepers/y.ts`]: importing("../snapshots/z.js"),
      [`${S}/snapshots/z.ts`]: importing("../jobs/w.js"),
      [`${S}/jobs/w.ts`]: leaf,
    });
    for (const folder of ["jobs", "keepers", "snapshots"]) {
      expect(run.output).toContain(`error folders-no-cycles: ${S}/${folder}`);
    }
    expect(run.status).not.toBe(0);
  });

  it("pass the same folders once the loop is untied", () => {
    const run = folderCycles({
      [`${S}/jobs/x.ts`]: importing("../keepers/y.js"),
      [`${S}/keepers/y.ts`]: importing("../snapshots/z.js"),
      [`${S}/snapshots/z.ts`]: leaf,
    });
    expect(run.output).toContain("no dependency violations found");
    expect(run.status).toBe(0);
  });
});
