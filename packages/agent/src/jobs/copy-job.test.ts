/**
 * The copy job against replayed restic: which repository each call opens, where both logins go
 * (environment only, never argv or a log line), when the mirror is created, what the summary says
 * and how failures and cancels end. The recordings below are what restic 0.14 and 0.18 printed in
 * the same situations (agent-copy.test.ts runs the real binaries).
 */
import { type CommandRunCopy, CopySummary } from "@fleetback/protocol";
import { Check } from "typebox/value";
import { describe, expect, it } from "vitest";
import type { Recording } from "../restic/replay-adapter.js";
import {
  argsAfterSubcommand,
  EMPTY_OK,
  type JobTestOptions,
  type JobTestRun,
  linesOf,
  resticCalls,
  runJobForTest,
  subcommandOf,
  TEST_PASSWORD,
} from "../testing/job-run.js";
import { createCopyJob, MIRROR_PROBE_TIMEOUT_MS, NO_MIRROR_CREDENTIALS_ERROR } from "./copy-job.js";
import { NO_CREDENTIALS_ERROR } from "./repository-refusal.js";

const A = "37639d50d14d4e948a0ee85f1d0477765aed58a8e2e939eb3b44f4a22c094ab3";
const B = "d9ddce5bdc53aa3461bd3fa128bd4587223cab5a25a79922fd52d8fc0f5237b9";
const MIRROR_PASSWORD = "mirror-Canary/pw@1";
const MIRROR = { url: "rest:http://127.0.0.1:8001/m/", username: "mirror-user", password: MIRROR_PASSWORD };
const REPO = { url: "rest:http://127.0.0.1:8000/r/", username: "repo-user", password: TEST_PASSWORD };
const MIRROR_MERGED = "rest:http://mirror-user:mirror-Canary%2Fpw%401@127.0.0.1:8001/m/";
const REPO_MERGED = "rest:http://repo-user:testpass-secret-1@127.0.0.1:8000/r/";

const command = (ids: string[] = [A, B], extra: Partial<CommandRunCopy> = {}): CommandRunCopy => ({
  job_id: "01M8Q3V2A0R1S2T3V4W5X6Y7Z8",
  kind: "copy",
  requires_admin_creds: false,
  copy: { snapshot_ids: ids },
  ...extra,
});

/** A run that succeeded, printing `stdout` only. */
const printed = (stdout: string): Recording => ({ stdout, stderr: "", exitCode: 0 });
/** A run that failed with `exitCode`, printing `stderr` only. */
const failedWith = (exitCode: number, stderr: string): Recording => ({ stdout: "", stderr, exitCode });

const CONFIG = printed(
  '{\n  "version": 2,\n  "id": "785d5284f5ed58c3b5678b3345be8bfeef50caceffe2128ced76c969ec356396",\n  "chunker_polynomial": "2c68dfb83bd8c1"\n}\n',
);
const MISSING_REST_018 = failedWith(
  10,
  "Fatal: repository does not exist: unable to open config file: <config/> does not exist\nIs there a repository at the following location?\nrest:http://mirror-user:***@127.0.0.1:8001/m/\n",
);
const MISSING_LOCAL_014 = failedWith(
  1,
  "Fatal: unable to open config file: stat /srv/mirror/config: no such file or directory\nIs there a repository at the following location?\n/srv/mirror\n",
);
const REFUSED_014 = failedWith(
  1,
  'Fatal: unable to open config file: client.Head: Head "http://mirror-user:***@127.0.0.1:8001/m/config": dial tcp 127.0.0.1:8001: connect: connection refused\nIs there a repository at the following location?\nrest:http://mirror-user:***@127.0.0.1:8001/m/\n',
);
const INIT_018 = printed(
  "created restic repository 4c3b11d87f at rest:http://mirror-user:***@127.0.0.1:8001/m/ with chunker parameters copied from secondary repository\n\nPlease note that knowledge of your password is required to access\nthe repository. Losing your password means that your data is\nirrecoverably lost.\n",
);
const COPY_014 = printed(
  `\nsnapshot 37639d50 of [/srv/data] at 2026-11-24 06:12:18.003570971 +0000 UTC)\nskipping source snapshot 37639d50, was already copied to snapshot c435ff06\n\nsnapshot d9ddce5b of [/srv/data] at 2026-11-24 06:12:18.696774987 +0000 UTC)\n  copy started, this may take a while...\n[0:00] 100.00%  2 / 2 packs copied\n\nsnapshot e889430d saved\n`,
);

/** A mirror `snapshots --json` listing: copies carry `original`; restic prints local offsets. */
function listing(entries: { id: string; original?: string; time: string }[]): Recording {
  return printed(
    `${JSON.stringify(entries.map((entry) => ({ hostname: "web-1", paths: ["/srv/data"], ...entry })))}\n`,
  );
}
const MIRROR_ID_A = "c435ff06".padEnd(64, "0");
const MIRROR_ID_B = "e889430d".padEnd(64, "1");
const BOTH_COPIED = listing([
  { id: MIRROR_ID_A, original: A, time: "2026-11-24T07:12:18.003570971+01:00" },
  { id: MIRROR_ID_B, original: B, time: "2026-11-24T08:12:18.696774987+02:00" },
  // Another host's snapshot in the same mirror: counted, never taken for one of ours.
  { id: "9".repeat(64), original: "8".repeat(64), time: "2026-11-23T23:00:00Z" },
]);

/** Replays by subcommand; `init` and `copy` default to success, the probe to an existing mirror. */
function byCommand(recordings: Partial<Record<string, Recording>>) {
  return (subcommand: string): Recording =>
    recordings[subcommand] ??
    (subcommand === "cat" ? CONFIG : subcommand === "snapshots" ? BOTH_COPIED : EMPTY_OK);
}

/** The copy job replaying `recordings` by subcommand, with the mirror slot pushed unless told otherwise. */
function runCopy(
  recordings: Partial<Record<string, Recording>>,
  options: Omit<JobTestOptions, "replay"> = {},
  copy = command(),
): Promise<JobTestRun> {
  return runJobForTest(createCopyJob, copy, { replay: byCommand(recordings), mirror: MIRROR, ...options });
}

const allText = (ran: { lines: { line: string }[]; log: { entries: unknown[] } }) =>
  `${ran.lines.map((entry) => entry.line).join("\n")}\n${JSON.stringify(ran.log.entries)}`;

describe("copy", () => {
  it("fails without the mirror slot, and without the repository slot, before running restic", async () => {
    const noMirror = await runCopy({}, { repo: REPO, mirror: null });
    expect(noMirror.outcome).toEqual({
      status: "failed",
      exit_code: null,
      error: NO_MIRROR_CREDENTIALS_ERROR,
    });
    expect(noMirror.calls).toEqual([]);
    const noRepo = await runCopy({}, { repo: null });
    expect(noRepo.outcome).toEqual({ status: "failed", exit_code: null, error: NO_CREDENTIALS_ERROR });
    expect(noRepo.calls).toEqual([]);
  });

  it("0.18: creates a missing mirror from the repository, copies, and reports what the mirror holds", async () => {
    const ran = await runCopy({ cat: MISSING_REST_018, init: INIT_018 }, { repo: REPO });
    expect(ran.outcome).toEqual({
      status: "succeeded",
      exit_code: 0,
      summary: {
        initialised: true,
        requested: 2,
        mirrored: 2,
        missing: [],
        mirror_snapshot_count: 3,
        mirror_latest_time: "2026-11-24T06:12:18.696Z",
      },
    });
    expect(Check(CopySummary, ran.outcome.summary)).toBe(true);
    const calls = resticCalls(ran);
    expect(calls.map((call) => call.args)).toEqual([
      ["--cache-dir", "/state/cache", "cat", "config"],
      ["--cache-dir", "/state/cache", "init", "--copy-chunker-params"],
      ["--cache-dir", "/state/cache", "copy", A, B],
      ["--cache-dir", "/state/cache", "--json", "snapshots"],
    ]);
    for (const call of calls) {
      // The mirror is restic's repository in every call; the host's repository only its source.
      expect(call.env).toMatchObject({ RESTIC_REPOSITORY: MIRROR_MERGED, RESTIC_PASSWORD: MIRROR_PASSWORD });
      expect(JSON.stringify(call.args)).not.toMatch(/Canary|secret|-user/);
    }
    for (const call of calls.slice(0, 3)) {
      expect(call.env).toMatchObject({
        RESTIC_FROM_REPOSITORY: REPO_MERGED,
        RESTIC_FROM_PASSWORD: TEST_PASSWORD,
      });
    }
    expect(calls[3]?.env.RESTIC_FROM_REPOSITORY).toBeUndefined();
    expect(calls[0]?.timeoutMs).toBe(MIRROR_PROBE_TIMEOUT_MS);
    expect(calls[2]?.timeoutMs).toBeUndefined();

    const agent = linesOf(ran, "agent");
    expect(agent).toEqual([
      "the mirror repository does not exist yet: creating it with the repository's chunker parameters",
      "copying 2 snapshots to the mirror",
      "the mirror holds all 2 snapshots; 3 in all",
    ]);
    expect(linesOf(ran, "stdout")).toContain(
      // restic redacts the password itself; a user name is no secret (issue 31: it may be part of
      // a path), so it stays.
      "created restic repository 4c3b11d87f at rest:http://mirror-user:***@127.0.0.1:8001/m/ with chunker parameters copied from secondary repository",
    );
    // The mirror's listing is parsed, not logged; the probe's config is kept from the server.
    expect(allText(ran)).not.toMatch(/Canary|testpass|"original"/);
  });

  it("0.14: a missing local mirror (exit 1, no such file) is created; an existing one is not", async () => {
    const created = await runCopy(
      { cat: MISSING_LOCAL_014, copy: COPY_014 },
      { version: "0.14.0", mirror: { url: "/srv/mirror", password: MIRROR_PASSWORD } },
    );
    expect(created.outcome).toMatchObject({
      status: "succeeded",
      summary: { initialised: true, mirrored: 2 },
    });
    expect(resticCalls(created).map((call) => subcommandOf(call.args))).toEqual([
      "cat",
      "init",
      "copy",
      "snapshots",
    ]);
    expect(resticCalls(created, "init")[0]?.env).toMatchObject({
      RESTIC_REPOSITORY: "/srv/mirror",
      RESTIC_FROM_REPOSITORY: "/srv/repo",
      RESTIC_FROM_PASSWORD: TEST_PASSWORD,
    });
    expect(linesOf(created, "stdout")).toContain(
      "skipping source snapshot 37639d50, was already copied to snapshot c435ff06",
    );

    const existing = await runCopy({ copy: COPY_014 }, { version: "0.14.0" });
    expect(existing.outcome).toMatchObject({
      status: "succeeded",
      summary: { initialised: false, requested: 2, mirrored: 2, missing: [] },
    });
    expect(resticCalls(existing).map((call) => subcommandOf(call.args))).toEqual([
      "cat",
      "copy",
      "snapshots",
    ]);
    // `cat config` printed the mirror's config, chunker polynomial and all: not for the job log.
    expect(allText(existing)).not.toMatch(/chunker_polynomial|2c68dfb83bd8c1/);
  });

  it("0.14: a mirror that refuses connections (exit 1 too) fails the copy and is not created", async () => {
    const ran = await runCopy({ cat: REFUSED_014 }, { version: "0.14.0" });
    expect(ran.outcome).toEqual({
      status: "failed",
      exit_code: 1,
      error:
        'the mirror cannot be opened: Fatal: unable to open config file: client.Head: Head "http://mirror-user:***@127.0.0.1:8001/m/config": dial tcp 127.0.0.1:8001: connect: connection refused',
    });
    expect(resticCalls(ran).map((call) => subcommandOf(call.args))).toEqual(["cat"]);
  });

  it("a copy that exits non-zero fails with restic's error and lists nothing", async () => {
    const ran = await runCopy(
      {
        copy: failedWith(
          1,
          `Fatal: unable to open repository at ${REPO_MERGED}: wrong password or no key found\n`,
        ),
      },
      { repo: REPO },
    );
    expect(ran.outcome).toEqual({
      status: "failed",
      exit_code: 1,
      error:
        "copying to the mirror failed: Fatal: unable to open repository at ***: wrong password or no key found",
    });
    expect(resticCalls(ran, "snapshots")).toEqual([]);
    expect(allText(ran)).not.toMatch(/testpass|repo-user/);
  });

  it("fails naming how many requested snapshots the mirror still lacks, with the summary", async () => {
    // 0.14 and 0.18 exit 0 for an id the source does not have ('Ignoring "…": no matching ID').
    const ran = await runCopy({
      snapshots: listing([{ id: MIRROR_ID_A, original: A, time: "2026-11-24T06:12:18Z" }]),
    });
    expect(ran.outcome).toEqual({
      status: "failed",
      exit_code: 0,
      error: "the mirror holds no copy of 1 of the 2 snapshots after the copy",
      summary: {
        initialised: false,
        requested: 2,
        mirrored: 1,
        missing: [B],
        mirror_snapshot_count: 1,
        mirror_latest_time: "2026-11-24T06:12:18.000Z",
      },
    });
  });

  it("counts a mirror snapshot with the requested id itself, and an empty mirror has no latest time", async () => {
    const sameId = await runCopy(
      { snapshots: listing([{ id: A, time: "2026-11-24T06:12:18Z" }]) },
      {},
      command([A]),
    );
    expect(sameId.outcome).toMatchObject({ status: "succeeded", summary: { mirrored: 1, missing: [] } });
    const empty = await runCopy({ snapshots: listing([]) }, {}, command([A]));
    expect(empty.outcome).toMatchObject({
      status: "failed",
      summary: { mirrored: 0, missing: [A], mirror_snapshot_count: 0, mirror_latest_time: null },
    });
    expect(Check(CopySummary, empty.outcome.summary)).toBe(true);
  });

  it("applies the command's caps, over the host's, to every call", async () => {
    const ran = await runCopy(
      { cat: MISSING_REST_018 },
      { hostCaps: { up: 100, down: 200 } },
      command([A], { bandwidth_up_kbps: 300 }),
    );
    const calls = resticCalls(ran);
    expect(calls).toHaveLength(4);
    for (const call of calls) {
      expect(call.args.slice(0, 6)).toEqual([
        "--cache-dir",
        "/state/cache",
        "--limit-upload",
        "300",
        "--limit-download",
        "200",
      ]);
    }
  });

  it.each(["cat", "init", "copy", "snapshots"])("a cancel during %s ends the job cancelled", async (step) => {
    const controller = new AbortController();
    const ran = await runJobForTest(createCopyJob, command(), {
      replay: (subcommand) => {
        if (subcommand === step) {
          controller.abort();
        }
        return byCommand({ cat: MISSING_REST_018 })(subcommand);
      },
      signal: controller.signal,
      mirror: MIRROR,
    });
    expect(ran.outcome).toEqual({ status: "cancelled", exit_code: null });
    const ranSteps = resticCalls(ran).map((call) => subcommandOf(call.args));
    expect(ranSteps.at(-1)).toBe(step);
    expect(argsAfterSubcommand(resticCalls(ran)[0]?.args ?? [])).toEqual(["config"]);
  });
});
