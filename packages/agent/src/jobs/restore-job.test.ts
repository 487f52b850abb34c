// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the shell forms ${HOME} and ${USER} are the input under test
import { mkdirSync, writeFileSync } from "node:fs";
import { mkdir, mkdtemp, readFile, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { CommandRunRestore } from "@fleetback/protocol";
import { describe, expect, it } from "vitest";
import { createToolFlagProbe, flagCachePath } from "../restic/flag-probe.js";
import type { Recording } from "../restic/replay-adapter.js";
import type { ProcessSpec } from "../restic/runner.js";
import { unescapeInclude } from "../restore-helper/helper-request.js";
import {
  argsAfterSubcommand,
  EMPTY_OK,
  type FixtureVersion,
  fixture,
  fixtureHelp,
  type JobTestOptions,
  linesOf,
  recordedScenario,
  resticCalls,
  runJobForTest,
} from "../testing/job-run.js";
import { createRestoreJob } from "./restore-job.js";

const SCENARIO = recordedScenario("0.18.0");
/** The recordings restore S1's docs/ folder (3 files: 15 + 13 + 10 bytes, and sub/). */
const SNAPSHOT = SCENARIO.snapshots.S1.id;
const DOCS = `${SCENARIO.tree}/docs`;
const JOB_ID = "01JD0000000000000000000001";

function restoreCommand(overrides: Partial<CommandRunRestore["restore"]> = {}): CommandRunRestore {
  return {
    job_id: JOB_ID,
    kind: "restore",
    requires_admin_creds: false,
    restore: {
      snapshot_id: SNAPSHOT,
      paths: [DOCS],
      in_place: false,
      target_dir: `$HOME/fleetback-restore/${JOB_ID}/`,
      ...overrides,
    },
  };
}

const help = (version: FixtureVersion): Recording => ({
  stdout: fixtureHelp(version, "restore"),
  stderr: "",
  exitCode: 0,
});

/** A restic that says it is 0.17.0; whether its restore --help lists --no-ownership is up to the test. */
const VERSION_017: Recording = {
  stdout: "restic 0.17.0 compiled with go1.22.5 on linux/amd64\n",
  stderr: "",
  exitCode: 0,
};
function help017(listsNoOwnership: boolean): Recording {
  const base = help("0.18.0").stdout;
  return {
    ...help("0.18.0"),
    stdout: listsNoOwnership
      ? base.replace(
          "      --overwrite behavior",
          "      --no-ownership            do not restore file ownership\n      --overwrite behavior",
        )
      : base,
  };
}

/** Replays `helpText` for `restore --help` (the flag probe) and `recording` for everything else. */
function withHelp(recording: Recording, helpText: Recording = help("0.18.0")): JobTestOptions["replay"] {
  return (_subcommand, spec) => (spec.args.includes("--help") ? helpText : recording);
}

/**
 * Replays `recording` and, as real restic does for an include that matches, writes
 * `<target>/<include>`: restic before 0.16 says nothing about what it restored, so the job looks.
 */
function writingIncludes(recording: Recording) {
  return (_subcommand: string, spec: ProcessSpec): Recording => {
    const after = argsAfterSubcommand(spec.args);
    const target = after[after.indexOf("--target") + 1] ?? "";
    after.forEach((arg, index) => {
      const include = after[index + 1];
      if (arg === "--include" && include !== undefined) {
        const place = join(target, unescapeInclude(include));
        mkdirSync(dirname(place), { recursive: true });
        writeFileSync(place, "restored\n");
      }
    });
    return recording;
  };
}

async function runRestore(
  command: CommandRunRestore,
  replay: JobTestOptions["replay"],
  extra: Partial<JobTestOptions> = {},
  agentDirs: string[] = [],
) {
  const home = await mkdtemp(join(tmpdir(), "fleetback-home-"));
  const stateDir = await mkdtemp(join(tmpdir(), "fleetback-state-"));
  const ran = await runJobForTest(
    (deps) =>
      createRestoreJob({
        ...deps,
        agentDirs: [stateDir, ...agentDirs],
        toolFlags: createToolFlagProbe({ restic: deps.restic, stateDir, log: deps.log }),
      }),
    command,
    { replay, env: { HOME: home }, ...extra },
  );
  return { ...ran, home, stateDir };
}

const restoreArgv = (ran: Awaited<ReturnType<typeof runRestore>>) => {
  const [call] = resticCalls(ran, "restore").filter((c) => !c.args.includes("--help"));
  return call === undefined ? undefined : { global: call.args, after: argsAfterSubcommand(call.args) };
};

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
        return spec.args.includes("--help") ? help("0.18.0") : fixture("0.18.0", "restore-include-vv-json");
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
        return spec.args.includes("--help") ? help("0.18.0") : fixture("0.18.0", "restore-include-vv-json");
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

describe("a restore that restores nothing fails (issue 31)", () => {
  const nothing = (paths: string[]) =>
    `nothing in snapshot ${SNAPSHOT} matches ${paths.join(", ")}: no file was restored`;

  it("0.18: restic's bare summary (includes matched nothing, exit 0) fails the job with a sentence", async () => {
    // What restic 0.18 prints for `--json restore <id> --include /srv/x` when nothing matches.
    const ran = await runRestore(
      restoreCommand({ paths: ["/srv/x"] }),
      withHelp({ stdout: '{"message_type":"summary"}\n', stderr: "", exitCode: 0 }),
    );
    expect(ran.outcome).toMatchObject({ status: "failed", exit_code: 0, error: nothing(["/srv/x"]) });
    expect(linesOf(ran, "agent")).toContain(nothing(["/srv/x"]));
  });

  it("0.14: a new-directory restore that wrote nothing fails; one that wrote its path succeeds", async () => {
    const recording = fixture("0.14.0", "restore-include-text");
    const none = await runRestore(restoreCommand({ paths: [DOCS, "/srv/x"] }), () => recording, {
      version: "0.14.0",
    });
    expect(none.outcome).toEqual({ status: "failed", exit_code: 0, error: nothing([DOCS, "/srv/x"]) });
    const some = await runRestore(restoreCommand(), writingIncludes(recording), { version: "0.14.0" });
    expect(some.outcome).toEqual({ status: "succeeded", exit_code: 0 });
  });

  it("0.14 in place: a path that exists but restic left untouched counts as not restored", async () => {
    const base = await mkdtemp(join(tmpdir(), "fleetback-inplace-"));
    const existing = join(base, "kept.txt");
    await writeFile(existing, "already here\n");
    const command = restoreCommand({ in_place: true, target_dir: "/", paths: [existing] });
    const untouched = await runRestore(command, () => EMPTY_OK, { version: "0.14.0" });
    expect(untouched.outcome).toMatchObject({ status: "failed", error: nothing([existing]) });
    const rewritten = await runRestore(command, writingIncludes(EMPTY_OK), { version: "0.14.0" });
    expect(rewritten.outcome).toMatchObject({ status: "succeeded" });
  });

  it("names at most five paths", async () => {
    const paths = ["/a", "/b", "/c", "/d", "/e", "/f", "/g"];
    const ran = await runRestore(restoreCommand({ paths }), () => EMPTY_OK, { version: "0.14.0" });
    expect(ran.outcome.error).toBe(
      `nothing in snapshot ${SNAPSHOT} matches /a, /b, /c, /d, /e and 2 more: no file was restored`,
    );
  });
});

describe("restore output", () => {
  it("status lines become progress (first at once, files clamped, agent ETA), never log lines", async () => {
    const recording = fixture("0.18.0", "restore-big-json");
    const ran = await runRestore(restoreCommand(), withHelp(recording), { msPerLine: 400 });
    // restic's summary of 5,000 restored files counts the directories too, beyond total_files.
    const { message_type: _type, ...summary } = JSON.parse(
      recording.stdout.trimEnd().split("\n").at(-1) ?? "",
    );
    expect(summary.total_files).toBe(5001);
    expect(summary.files_restored).toBeGreaterThan(summary.total_files);
    expect(ran.outcome).toMatchObject({ status: "succeeded", summary });
    expect(linesOf(ran, "stdout").some((line) => line.includes('"status"'))).toBe(false);
    expect(ran.progress[0]?.progress).toMatchObject({ percent_done: 0, files_done: 0 });
    const last = ran.progress.at(-1)?.progress;
    expect(last).toMatchObject({ percent_done: 1, files_done: 5001, files_total: 5001, eta_seconds: 0 });
    expect(last?.files_done).toBeLessThanOrEqual(last?.files_total ?? 0);
  });

  it("per-file lines set current_file and are logged as they are", async () => {
    const recording = fixture("0.18.0", "restore-include-vv-json");
    const ran = await runRestore(restoreCommand(), withHelp(recording), { msPerLine: 1_000 });
    const stdout = linesOf(ran, "stdout");
    // 3 files, sub/, docs/ and the 4 folders above it, then the summary.
    expect(stdout).toHaveLength(10);
    expect(stdout).toEqual(recording.stdout.trimEnd().split("\n"));
    const first = JSON.parse(stdout[0] ?? "") as { message_type: string; action: string; item: string };
    expect(first).toMatchObject({ message_type: "verbose_status", action: "restored" });
    expect(first.item.startsWith(`${DOCS}/`)).toBe(true);
    expect(ran.progress.some((p) => p.progress.current_file === first.item)).toBe(true);
    expect(ran.outcome.summary).toEqual({
      total_files: 5,
      files_restored: 9,
      total_bytes: 38,
      bytes_restored: 38,
    });
  });

  it("an unknown flag error fails the job with restic's message", async () => {
    const ran = await runRestore(restoreCommand(), withHelp(fixture("0.18.0", "restore-no-ownership")));
    expect(ran.outcome).toMatchObject({
      status: "failed",
      exit_code: 1,
      error: "unknown flag: --no-ownership",
    });
  });
});
