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
