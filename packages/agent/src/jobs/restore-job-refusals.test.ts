import { mkdir, mkdtemp, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Recording } from "../restic/replay-adapter.js";
import { argsAfterSubcommand, EMPTY_OK, fixture, linesOf, resticCalls } from "../testing/job-run.js";
import {
  DOCS,
  restoreArgv,
  restoreCommand,
  restoreHelp,
  runRestore,
  SNAPSHOT,
  withHelp,
  writingIncludes,
} from "../testing/restore-run.js";

describe("restore refusals (issue 13)", () => {
  it("refuses a target that reaches the agent's state dir through a symlink, before anything runs", async () => {
    const base = await mkdtemp(join(tmpdir(), "fleetback-agentdirs-"));
    const agentState = join(base, "state");
    await mkdir(join(agentState, "update"), { recursive: true });
    await symlink(agentState, join(base, "innocent"));
    for (const [target_dir, paths] of [
      [join(base, "innocent", "update"), [DOCS]],
      [join(base, "innocent"), [DOCS]],
      [base, [DOCS]],
    ] as const) {
      const ran = await runRestore(restoreCommand({ target_dir, paths: [...paths] }), () => EMPTY_OK, {}, [
        agentState,
      ]);
      expect(ran.outcome, target_dir).toMatchObject({ status: "failed", exit_code: null });
      expect(ran.outcome.error, target_dir).toMatch(/agent's own directory .*state.*nothing was restored/);
      expect(ran.calls, target_dir).toHaveLength(0);
    }
    // In place, a path whose parent is a symlink into the state dir.
    const inPlace = await runRestore(
      restoreCommand({
        in_place: true,
        target_dir: "/",
        paths: [join(base, "innocent", "update", "boot.json")],
      }),
      () => EMPTY_OK,
      {},
      [agentState],
    );
    expect(inPlace.outcome).toMatchObject({ status: "failed" });
    expect(inPlace.calls).toHaveLength(0);
  });

  it("restic 0.14 into an existing non-empty directory is refused; an empty one restores", async () => {
    const target = await mkdtemp(join(tmpdir(), "fleetback-target-"));
    const empty = await runRestore(
      restoreCommand({ target_dir: target }),
      writingIncludes(fixture("0.14.0", "restore-include-text")),
      { version: "0.14.0" },
    );
    expect(empty.outcome).toMatchObject({ status: "succeeded" });
    await writeFile(join(target, "left-over"), "x");
    const ran = await runRestore(restoreCommand({ target_dir: target }), () => EMPTY_OK, {
      version: "0.14.0",
    });
    expect(ran.outcome).toMatchObject({ status: "failed", exit_code: null });
    expect(ran.outcome.error).toMatch(/is not empty \(restic older than 0\.16 follows symlinks/);
    expect(ran.calls).toHaveLength(0);
    // 0.18 does not follow them: the same target is fine.
    const newer = await runRestore(restoreCommand({ target_dir: target }), withHelp(EMPTY_OK));
    expect(newer.outcome).toMatchObject({ status: "succeeded" });
  });

  it("restic 0.14 in place is refused only where a symlink lies on or below a path it writes", async () => {
    const base = await mkdtemp(join(tmpdir(), "fleetback-inplace-"));
    await mkdir(join(base, "plain", "sub"), { recursive: true });
    await mkdir(join(base, "elsewhere"));
    await symlink(join(base, "elsewhere"), join(base, "link"));
    await symlink(join(base, "elsewhere"), join(base, "plain", "sub", "inner"));
    const inPlace = (paths: string[]) =>
      runRestore(restoreCommand({ in_place: true, target_dir: "/", paths }), writingIncludes(EMPTY_OK), {
        version: "0.14.0",
      });
    for (const path of [join(base, "link", "f"), join(base, "link"), join(base, "plain")]) {
      const ran = await inPlace([path]);
      expect(ran.outcome, path).toMatchObject({ status: "failed", exit_code: null });
      expect(ran.outcome.error, path).toMatch(/is a symlink where the restore writes/);
      expect(ran.calls, path).toHaveLength(0);
    }
    const clear = await inPlace([join(base, "elsewhere", "f"), join(base, "new", "g")]);
    expect(clear.outcome).toMatchObject({ status: "succeeded" });
  });
});

/** `restic ls --json` of `snapshot`: the snapshot line, then one node per path. */
function lsOf(paths: string[]): Recording {
  const snapshot = JSON.stringify({ id: SNAPSHOT, short_id: SNAPSHOT.slice(0, 8), struct_type: "snapshot" });
  const nodes = paths.map((path) =>
    JSON.stringify({
      name: path.split("/").at(-1),
      type: "dir",
      path,
      mtime: "2026-11-20T09:00:00Z",
      struct_type: "node",
    }),
  );
  return { stdout: `${[snapshot, ...nodes].join("\n")}\n`, stderr: "", exitCode: 0 };
}

describe("the agent's own directories are never restored (issue 33)", () => {
  it("refuses a path in one, to a new directory too, before anything runs", async () => {
    const base = await mkdtemp(join(tmpdir(), "fleetback-agentdirs-"));
    const config = join(base, "etc", "fleetback-agent");
    for (const path of [config, `${config}/agent.json`, `${config}/`]) {
      const ran = await runRestore(restoreCommand({ paths: [DOCS, path] }), () => EMPTY_OK, {}, [config]);
      expect(ran.outcome, path).toMatchObject({ status: "failed", exit_code: null });
      expect(ran.outcome.error, path).toBe(
        `${path} is the agent's own directory ${config} or lies inside it, whose files are never restored; nothing was restored`,
      );
      expect(ran.calls, path).toHaveLength(0);
    }
  });

  it("restores a folder above one as the entries around it, found by one restic ls", async () => {
    const base = await mkdtemp(join(tmpdir(), "fleetback-agentdirs-"));
    const etc = join(base, "etc");
    const config = join(etc, "fleetback-agent");
    const ran = await runRestore(
      restoreCommand({ paths: [base, DOCS] }),
      (subcommand, spec) => {
        if (subcommand === "ls") {
          return lsOf([join(base, "etc"), join(base, "srv"), config, join(etc, "nginx"), join(etc, "x[1]")]);
        }
        return spec.args.includes("--help")
          ? restoreHelp("0.18.0")
          : fixture("0.18.0", "restore-include-vv-json");
      },
      {},
      [config],
    );
    expect(ran.outcome).toMatchObject({ status: "succeeded" });
    const [ls] = resticCalls(ran, "ls");
    expect(ls === undefined ? undefined : argsAfterSubcommand(ls.args)).toEqual([
      "--no-lock",
      SNAPSHOT,
      base,
      etc,
    ]);
    const includes = restoreArgv(ran)?.after.filter((_arg, i, all) => all[i - 1] === "--include");
    expect(includes).toEqual([join(etc, "nginx"), join(etc, "x\\[1\\]"), join(base, "srv"), DOCS]);
    expect(linesOf(ran, "agent")).toContain(
      `left out: the agent's own directory ${config}, which this snapshot holds; restoring the 4 path(s) around it`,
    );
  });

  it("restores a folder above one as it is when the snapshot lacks it", async () => {
    const base = await mkdtemp(join(tmpdir(), "fleetback-agentdirs-"));
    const config = join(base, "etc", "fleetback-agent");
    const ran = await runRestore(
      restoreCommand({ paths: [join(base, "etc")] }),
      (subcommand, spec) => {
        if (subcommand === "ls") {
          return lsOf([join(base, "etc", "nginx")]);
        }
        return spec.args.includes("--help")
          ? restoreHelp("0.18.0")
          : fixture("0.18.0", "restore-include-vv-json");
      },
      {},
      [config],
    );
    expect(ran.outcome).toMatchObject({ status: "succeeded" });
    expect(restoreArgv(ran)?.after.slice(-2)).toEqual(["--include", join(base, "etc")]);
  });

  it("fails when the folder holds nothing else, or the listing fails", async () => {
    const base = await mkdtemp(join(tmpdir(), "fleetback-agentdirs-"));
    const config = join(base, "fleetback-agent");
    const only = await runRestore(
      restoreCommand({ paths: [base] }),
      (subcommand) => (subcommand === "ls" ? lsOf([config]) : EMPTY_OK),
      {},
      [config],
    );
    expect(only.outcome).toMatchObject({ status: "failed" });
    expect(only.outcome.error).toBe(
      `the paths hold nothing but the agent's own directory ${config}, whose files are never restored`,
    );
    expect(resticCalls(only, "restore").filter((call) => !call.args.includes("--help"))).toHaveLength(0);
    const broken = await runRestore(
      restoreCommand({ paths: [base] }),
      (subcommand) =>
        subcommand === "ls" ? { stdout: "", stderr: "Fatal: wrong password\n", exitCode: 1 } : EMPTY_OK,
      {},
      [config],
    );
    expect(broken.outcome.error).toMatch(
      /^cannot tell whether the snapshot holds the agent's own directories/,
    );
    expect(resticCalls(broken, "restore").filter((call) => !call.args.includes("--help"))).toHaveLength(0);
  });
});
