// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the shell forms ${HOME} and ${USER} are the input under test
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { flagCachePath } from "../restic/flag-probe.js";
import type { Recording } from "../restic/replay-adapter.js";
import { EMPTY_OK, fixture, linesOf, recordedScenario, resticCalls } from "../testing/job-run.js";
import {
  DOCS,
  JOB_ID,
  restoreArgv,
  restoreCommand,
  restoreHelp,
  runRestore,
  SNAPSHOT,
  withHelp,
  writingIncludes,
} from "../testing/restore-run.js";

const SCENARIO = recordedScenario("0.18.0");

/** A restic that says it is 0.17.0; whether its restore --help lists --no-ownership is up to the test. */
const VERSION_017: Recording = {
  stdout: "restic 0.17.0 compiled with go1.22.5 on linux/amd64\n",
  stderr: "",
  exitCode: 0,
};
function help017(listsNoOwnership: boolean): Recording {
  const base = restoreHelp("0.18.0").stdout;
  return {
    ...restoreHelp("0.18.0"),
    stdout: listsNoOwnership
      ? base.replace(
          "      --overwrite behavior",
          "      --no-ownership            do not restore file ownership\n      --overwrite behavior",
        )
      : base,
  };
}

describe("restore argv", () => {
  it("new directory on 0.18: JSON, -vv, expanded and created target, no --no-ownership (help lacks it)", async () => {
    const ran = await runRestore(restoreCommand(), withHelp(fixture("0.18.0", "restore-include-vv-json")));
    const target = join(ran.home, "fleetback-restore", JOB_ID);
    expect(ran.outcome).toMatchObject({ status: "succeeded", exit_code: 0 });
    expect(restoreArgv(ran)?.after).toEqual([SNAPSHOT, "--target", target, "-vv", "--include", DOCS]);
    expect(restoreArgv(ran)?.global).toContain("--json");
    expect((await stat(target)).isDirectory()).toBe(true);
    expect((await stat(target)).mode & 0o777).toBe(0o700);
    expect(linesOf(ran, "agent")).toContain(
      "ownership is restored as recorded in the snapshot: restic 0.18.0 offers no --no-ownership",
    );
    // The probe ran once and its answer is cached in the state dir.
    expect(resticCalls(ran, "restore").filter((c) => c.args.includes("--help"))).toHaveLength(1);
    expect(JSON.parse(await readFile(flagCachePath(ran.stateDir), "utf8"))).toEqual({
      "restic 0.18.0: restore --no-ownership": false,
    });
  });

  it("in place targets / and never probes or passes --no-ownership", async () => {
    const ran = await runRestore(
      restoreCommand({ in_place: true, target_dir: "/" }),
      withHelp(EMPTY_OK, help017(true)),
      { versionRecording: VERSION_017 },
    );
    expect(ran.outcome).toMatchObject({ status: "succeeded" });
    expect(restoreArgv(ran)?.after).toEqual([SNAPSHOT, "--target", "/", "-vv", "--include", DOCS]);
    expect(resticCalls(ran, "restore").some((c) => c.args.includes("--help"))).toBe(false);
    expect(linesOf(ran, "agent").some((line) => line.includes("ownership"))).toBe(false);
  });

  it("a 0.17 whose help lists --no-ownership gets it for a new directory, never in place", async () => {
    const replay = withHelp(EMPTY_OK, help017(true));
    const newDir = await runRestore(restoreCommand({ paths: ["/a b/ü[1]", "/c"] }), replay, {
      versionRecording: VERSION_017,
    });
    expect(restoreArgv(newDir)?.after).toEqual([
      SNAPSHOT,
      "--target",
      join(newDir.home, "fleetback-restore", JOB_ID),
      "--no-ownership",
      "-vv",
      "--include",
      "/a b/ü\\[1\\]",
      "--include",
      "/c",
    ]);
    expect(linesOf(newDir, "agent").some((line) => line.includes("ownership is restored"))).toBe(false);
    const inPlace = await runRestore(restoreCommand({ in_place: true, target_dir: "/" }), replay, {
      versionRecording: VERSION_017,
    });
    expect(restoreArgv(inPlace)?.after).not.toContain("--no-ownership");
  });

  it("a 0.17 whose help does not list --no-ownership does not get it", async () => {
    const ran = await runRestore(
      restoreCommand({ target_dir: "~/out" }),
      withHelp(EMPTY_OK, help017(false)),
      { versionRecording: VERSION_017 },
    );
    expect(restoreArgv(ran)?.after).toEqual([
      SNAPSHOT,
      "--target",
      join(ran.home, "out"),
      "-vv",
      "--include",
      DOCS,
    ]);
    expect(linesOf(ran, "agent")).toContain(
      "ownership is restored as recorded in the snapshot: restic 0.17.0 offers no --no-ownership",
    );
  });

  it("0.14: text output, no -vv, no probe; ${HOME} is expanded", async () => {
    const ran = await runRestore(
      restoreCommand({ target_dir: "${HOME}/r" }),
      writingIncludes(fixture("0.14.0", "restore-include-text")),
      { version: "0.14.0" },
    );
    expect(ran.outcome).toMatchObject({ status: "succeeded" });
    expect(restoreArgv(ran)?.global).not.toContain("--json");
    expect(restoreArgv(ran)?.after).toEqual([SNAPSHOT, "--target", join(ran.home, "r"), "--include", DOCS]);
    expect(resticCalls(ran, "restore")).toHaveLength(1);
    const restoring = `restoring <Snapshot ${recordedScenario("0.14.0").snapshots.S1.short_id} of [${SCENARIO.tree}] at `;
    expect(linesOf(ran, "stdout")[0]?.slice(0, restoring.length)).toBe(restoring);
    expect(ran.progress[0]?.progress).toEqual({ percent_done: 0, files_done: 0, bytes_done: 0 });
  });

  it.each(["$OTHER/restore", "/srv/${USER}/x"])("refuses %s before anything runs", async (target_dir) => {
    const ran = await runRestore(restoreCommand({ target_dir }), () => EMPTY_OK);
    expect(ran.outcome).toMatchObject({ status: "failed", exit_code: null });
    expect(ran.outcome.error).toMatch(/variable other than \$HOME; nothing was restored/);
    expect(ran.calls).toHaveLength(0);
  });

  it("refuses a new-directory restore to /", async () => {
    const ran = await runRestore(restoreCommand({ target_dir: "/" }), () => EMPTY_OK);
    expect(ran.outcome).toMatchObject({ status: "failed" });
    expect(ran.calls).toHaveLength(0);
  });
});
