import { mkdirSync, writeFileSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { CommandRunDrill, DrillSummary } from "@fleetback/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Recording } from "../restic/replay-adapter.js";
import type { ProcessSpec } from "../restic/runner.js";
import {
  argsAfterSubcommand,
  EMPTY_OK,
  type FixtureVersion,
  fixture,
  linesOf,
  resticCalls,
  runJobForTest,
} from "../testing/job-run.js";
import { createDrillJob, DRILL_DIR_NAME, type DrillJobDeps } from "./drill-job.js";
import type { RepositoryJobDeps } from "./repository-job.js";

const SNAPSHOT = "d2bec9aed4bf51d16cd0a438317dff948b93c57671d2023c1b7c6e9b9b4e97e7";
const JOB_ID = "01M807SKJ8H7QEZZS1A0ZWSK9V";
const GiB = 1024 ** 3;

function drillCommand(sample_files = 3, snapshot_id = SNAPSHOT): CommandRunDrill {
  return {
    job_id: JOB_ID,
    kind: "drill",
    requires_admin_creds: false,
    drill: { snapshot_id, sample_files },
  };
}

let stateDir: string;
beforeEach(async () => {
  stateDir = await mkdtemp(join(tmpdir(), "fleetback-drill-state-"));
});
afterEach(async () => {
  await rm(stateDir, { recursive: true, force: true });
});

/** Sizes of the regular files of the recorded whole-snapshot listing. */
function recordedFiles(version: FixtureVersion): Map<string, number> {
  const files = new Map<string, number>();
  for (const line of fixture(version, "ls-whole").stdout.split("\n")) {
    if (line.includes('"type":"file"')) {
      const node = JSON.parse(line) as { path: string; size: number };
      files.set(node.path, node.size);
    }
  }
  return files;
}

function includesOf(spec: ProcessSpec): string[] {
  const args = argsAfterSubcommand(spec.args);
  return args.flatMap((arg, i) => (args[i - 1] === "--include" ? [arg.replace(/\\(.)/g, "$1")] : []));
}

function targetOf(spec: ProcessSpec): string {
  const args = argsAfterSubcommand(spec.args);
  return args[args.indexOf("--target") + 1] ?? "";
}

/** restic restore, played by writing each included file at its recorded size (or another). */
function writeRestore(files: Map<string, number>, sizeOf = (_path: string, size: number) => size) {
  return (spec: ProcessSpec): Recording => {
    for (const path of includesOf(spec)) {
      const size = files.get(path);
      if (size === undefined) {
        continue;
      }
      const at = join(targetOf(spec), path);
      mkdirSync(dirname(at), { recursive: true });
      writeFileSync(at, Buffer.alloc(sizeOf(path, size)));
    }
    return EMPTY_OK;
  };
}

function drillJob(extra: Partial<DrillJobDeps> = {}) {
  return (deps: RepositoryJobDeps) =>
    createDrillJob({ ...deps, stateDir, random: () => 0.5, freeBytes: async () => 10 * GiB, ...extra });
}

async function scratchLeft(): Promise<string[]> {
  return readdir(join(stateDir, DRILL_DIR_NAME)).catch(() => []);
}

describe.each(["0.14.0", "0.18.0"] as const)("drill with restic %s", (version) => {
  it("lists the snapshot, restores a sample with --verify into the state dir, compares sizes, deletes it", async () => {
    const files = recordedFiles(version);
    let scratchDuringRestore: string[] = [];
    const ran = await runJobForTest(drillJob(), drillCommand(3), {
      version,
      replay: (subcommand, spec) => {
        if (subcommand === "ls") {
          return fixture(version, "ls-whole");
        }
        const recording = writeRestore(files)(spec);
        scratchDuringRestore = [targetOf(spec)];
        return recording;
      },
    });
    expect(ran.outcome).toMatchObject({ status: "succeeded", exit_code: 0 });
    const [ls, restore] = resticCalls(ran);
    expect(argsAfterSubcommand(ls?.args ?? [])).toEqual(["--no-lock", SNAPSHOT]);
    expect(ls?.args).toContain("--json");
    const restoreArgs = argsAfterSubcommand(restore?.args ?? []);
    expect(restoreArgs.slice(0, 4)).toEqual([
      SNAPSHOT,
      "--target",
      join(stateDir, "drill", JOB_ID),
      "--verify",
    ]);
    expect(restore?.args).not.toContain("--json");
    const sampled = includesOf(restore as ProcessSpec);
    expect(sampled).toHaveLength(3);
    for (const path of sampled) {
      expect(files.has(path)).toBe(true);
    }
    const summary = ran.outcome.summary as DrillSummary;
    expect(summary).toEqual({
      snapshot_id: SNAPSHOT,
      files_in_snapshot: files.size,
      files_checked: 3,
      bytes_checked: sampled.reduce((total, path) => total + (files.get(path) ?? 0), 0),
      mismatch_count: 0,
      mismatches: [],
    });
    expect(scratchDuringRestore).toEqual([join(stateDir, "drill", JOB_ID)]);
    expect(await scratchLeft()).toEqual([]);
    expect(linesOf(ran, "agent").some((line) => line.startsWith("the drill passed: 3 files"))).toBe(true);
  });

  it("fails naming the file whose restored size differs, and still deletes the scratch copy", async () => {
    const files = recordedFiles(version);
    const ran = await runJobForTest(drillJob(), drillCommand(100), {
      version,
      replay: (subcommand, spec) =>
        subcommand === "ls"
          ? fixture(version, "ls-whole")
          : writeRestore(files, (path, size) => (path.endsWith("/blob.bin") ? size - 1 : size))(spec),
    });
    const blob = [...files.keys()].find((path) => path.endsWith("/blob.bin")) ?? "";
    expect(ran.outcome).toMatchObject({
      status: "failed",
      exit_code: 0,
      error: `1 of ${files.size} sampled files differ from the snapshot: ${blob} has 65535 bytes, the snapshot records 65536`,
    });
    expect(ran.outcome.summary).toMatchObject({
      files_checked: files.size,
      mismatch_count: 1,
      mismatches: [{ path: blob, expected_size: 65536, restored_size: 65535 }],
    });
    expect(await scratchLeft()).toEqual([]);
  });
});

describe("drill", () => {
  it("fails with restic's own error when the restore cannot decrypt or verify, and deletes the scratch copy", async () => {
    const ran = await runJobForTest(drillJob(), drillCommand(2), {
      replay: (subcommand) =>
        subcommand === "ls"
          ? fixture("0.18.0", "ls-whole")
          : {
              stdout: "",
              stderr:
                "ignoring error for /tmp/x: ciphertext verification failed\nFatal: There were 1 errors\n",
              exitCode: 1,
            },
    });
    expect(ran.outcome).toMatchObject({
      status: "failed",
      exit_code: 1,
      error:
        "restic could not restore and verify the sample: Fatal: There were 1 errors (first: /tmp/x: ciphertext verification failed)",
      summary: { files_checked: 2, mismatch_count: 2 },
    });
    expect(await scratchLeft()).toEqual([]);
  });

  it("on 0.14 a snapshot the listing ignores (exit 0) fails before any restore", async () => {
    const ran = await runJobForTest(drillJob(), drillCommand(2, "deadbeef"), {
      version: "0.14.0",
      replay: () => fixture("0.14.0", "ls-bad-snapshot"),
    });
    expect(ran.outcome).toEqual({
      status: "failed",
      exit_code: 0,
      error: "snapshot deadbeef is not in the repository",
    });
    expect(resticCalls(ran, "restore")).toEqual([]);
  });

  it("a snapshot without regular files succeeds with nothing checked and says so", async () => {
    const onlyDirs = fixture("0.18.0", "ls-whole")
      .stdout.split("\n")
      .filter((line) => !line.includes('"type":"file"'))
      .join("\n");
    const ran = await runJobForTest(drillJob(), drillCommand(5), {
      replay: () => ({ stdout: onlyDirs, stderr: "", exitCode: 0 }),
    });
    expect(ran.outcome).toEqual({
      status: "succeeded",
      exit_code: 0,
      summary: {
        snapshot_id: SNAPSHOT,
        files_in_snapshot: 0,
        files_checked: 0,
        bytes_checked: 0,
        mismatch_count: 0,
        mismatches: [],
      },
    });
    expect(linesOf(ran, "agent")).toContain(
      `snapshot ${SNAPSHOT} holds no regular files; there is nothing to restore`,
    );
    expect(resticCalls(ran, "restore")).toEqual([]);
  });

  it("clears what an agent killed mid-drill left under drill/ before restoring", async () => {
    const leftover = join(stateDir, DRILL_DIR_NAME, "01M807SKJ8H7QEZZS1A0ZWSK00", "srv");
    mkdirSync(leftover, { recursive: true });
    writeFileSync(join(leftover, "restored.bin"), "old copy");
    const files = recordedFiles("0.18.0");
    const ran = await runJobForTest(drillJob(), drillCommand(2), {
      replay: (subcommand, spec) =>
        subcommand === "ls" ? fixture("0.18.0", "ls-whole") : writeRestore(files)(spec),
    });
    expect(ran.outcome.status).toBe("succeeded");
    expect(await scratchLeft()).toEqual([]);
  });

  it("refuses a sample larger than the free space of the state dir", async () => {
    const ran = await runJobForTest(drillJob({ freeBytes: async () => 1024 }), drillCommand(5), {
      replay: () => fixture("0.18.0", "ls-whole"),
    });
    expect(ran.outcome).toMatchObject({
      status: "failed",
      error: expect.stringMatching(/bytes free in .*nothing was restored$/),
    });
    expect(resticCalls(ran, "restore")).toEqual([]);
    expect(await scratchLeft()).toEqual([]);
  });

  it("a cancel during the restore ends cancelled and deletes the scratch copy", async () => {
    const abort = new AbortController();
    const files = recordedFiles("0.18.0");
    const ran = await runJobForTest(drillJob(), drillCommand(3), {
      signal: abort.signal,
      replay: (subcommand, spec) => {
        if (subcommand === "ls") {
          return fixture("0.18.0", "ls-whole");
        }
        writeRestore(files)(spec);
        abort.abort();
        return EMPTY_OK;
      },
    });
    expect(ran.outcome.status).toBe("cancelled");
    expect(await scratchLeft()).toEqual([]);
  });

  it("escapes restic's pattern characters in each included path", async () => {
    const listing = [
      `{"struct_type":"snapshot","id":"${SNAPSHOT}"}`,
      '{"name":"a[1]*?.txt","type":"file","path":"/srv/a[1]*?.txt","size":3,"struct_type":"node"}',
    ].join("\n");
    const ran = await runJobForTest(drillJob(), drillCommand(1), {
      replay: (subcommand) => (subcommand === "ls" ? { stdout: listing, stderr: "", exitCode: 0 } : EMPTY_OK),
    });
    const restore = resticCalls(ran, "restore")[0];
    expect(argsAfterSubcommand(restore?.args ?? []).slice(-2)).toEqual([
      "--include",
      "/srv/a\\[1\\]\\*\\?.txt",
    ]);
    // Nothing was written by the stand-in restic, so the file counts as missing.
    expect(ran.outcome).toMatchObject({
      status: "failed",
      error: "1 of 1 sampled files differ from the snapshot: /srv/a[1]*?.txt was not restored",
    });
  });

  it("refuses a drill without repository credentials before running restic", async () => {
    const ran = await runJobForTest(drillJob(), drillCommand(1), { repo: null, replay: () => EMPTY_OK });
    expect(ran.outcome.status).toBe("failed");
    expect(resticCalls(ran)).toEqual([]);
  });
});
