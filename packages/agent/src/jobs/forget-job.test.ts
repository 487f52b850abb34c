import type { CommandRunForget } from "@fleetback/protocol";
import { describe, expect, it } from "vitest";
import {
  EMPTY_OK,
  type FixtureVersion,
  fixture,
  linesOf,
  recordedLockedError,
  recordedScenario,
  resticCalls,
  runJobForTest,
  subcommandOf,
  TEST_PASSWORD,
} from "../testing/job-run.js";
import { createForgetJob } from "./forget-job.js";

function forgetCommand(overrides: Partial<CommandRunForget> = {}): CommandRunForget {
  return {
    job_id: "01M807SKJ8H7QEZZS1A0ZWSK9T",
    kind: "forget",
    requires_admin_creds: false,
    forget_groups: [{ tag: "t1", keep: { last: 1 } }],
    ...overrides,
  };
}

/** Two groups, so that a test sees whether the second one ran. */
function twoGroups(): CommandRunForget {
  return forgetCommand({
    forget_groups: [
      { tag: "t1", keep: { last: 1 } },
      { tag: "t2", keep: { last: 1 } },
    ],
  });
}

function replayForget(version: FixtureVersion, forget = "forget-tag") {
  return (subcommand: string) =>
    subcommand === "snapshots" ? fixture(version, "snapshots-after-forget") : fixture(version, forget);
}

describe("forget argv", () => {
  it("runs one forget per group with --json, the tag, --group-by host,tags and every keep flag; never --prune", async () => {
    const ran = await runJobForTest(
      createForgetJob,
      forgetCommand({
        forget_groups: [
          { tag: "docs", keep: { last: 3, daily: 7, weekly: 4, within_monthly: "1y6m" } },
          { tag: "db", keep: { hourly: 24, within: "30d" } },
        ],
        bandwidth_down_kbps: 50,
      }),
      { replay: replayForget("0.18.0"), hostCaps: { up: 10, down: null } },
    );
    expect(ran.outcome.status).toBe("succeeded");
    const forgets = resticCalls(ran, "forget");
    // Each group's run: the same global flags (both caps), then its tag and its keep flags.
    const forgetArgs = (tag: string, ...keep: string[]) => [
      "--cache-dir",
      "/state/cache",
      "--limit-upload",
      "10",
      "--limit-download",
      "50",
      "--json",
      "forget",
      "--tag",
      tag,
      "--group-by",
      "host,tags",
      ...keep,
    ];
    expect(forgets.map((call) => call.args)).toEqual([
      forgetArgs(
        "docs",
        "--keep-last",
        "3",
        "--keep-daily",
        "7",
        "--keep-weekly",
        "4",
        "--keep-within-monthly",
        "1y6m",
      ),
      forgetArgs("db", "--keep-hourly", "24", "--keep-within", "30d"),
    ]);
    expect(ran.calls.flatMap((call) => call.args)).not.toContain("--prune");
    expect(forgets[0]?.env.RESTIC_PASSWORD).toBe(TEST_PASSWORD);
  });

  it("an empty policy in any group fails the job before any process is started", async () => {
    const ran = await runJobForTest(
      createForgetJob,
      forgetCommand({
        forget_groups: [
          { tag: "docs", keep: { last: 3 } },
          { tag: "db", keep: {} },
        ],
        pre_hook: "echo never",
      }),
      { replay: () => EMPTY_OK, realHooks: true },
    );
    expect(ran.outcome).toEqual({
      status: "failed",
      exit_code: null,
      error:
        'tag "db": empty retention policy (it would delete every snapshot of the group); nothing was deleted',
    });
    expect(ran.calls).toEqual([]);
    expect(ran.reports).toEqual([]);
    expect(ran.stats).toEqual([]);
    expect(linesOf(ran, "agent")).toEqual([ran.outcome.error]);
  });

  it("no groups at all fails clearly, without starting anything", async () => {
    const ran = await runJobForTest(createForgetJob, forgetCommand({ forget_groups: [] }), {
      replay: () => EMPTY_OK,
    });
    expect(ran.outcome).toMatchObject({
      status: "failed",
      error: "the forget command names no groups (forget_groups); nothing was deleted",
    });
    expect(ran.calls).toEqual([]);
  });
});

describe("forget on recorded restic output", () => {
  it.each(["0.14.0", "0.18.0"] as const)(
    "%s: logs what was removed per tag, reports snapshots, then repo.stats last_forget_at",
    async (version) => {
      const ran = await runJobForTest(createForgetJob, forgetCommand(), {
        replay: replayForget(version),
        version,
      });
      expect(ran.outcome).toEqual({
        status: "succeeded",
        exit_code: 0,
        summary: {
          snapshots_removed: 1,
          snapshots_kept: 1,
          groups: [{ tag: "t1", removed: 1, kept: 1 }],
        },
      });
      // S1 and S3 carry t1; keeping the last one removes S1.
      const removed = recordedScenario(version).snapshots.S1.short_id;
      expect(linesOf(ran, "agent")).toEqual([`forget tag t1: removed 1 snapshot (${removed}), kept 1`]);
      // The JSON array is summarised, not logged raw.
      expect(linesOf(ran, "stdout")).toEqual([]);
      expect(ran.reports).toHaveLength(1);
      const count = ran.reports[0]?.snapshots.length;
      expect(count).toBeGreaterThan(0);
      expect(ran.stats).toEqual([{ last_forget_at: "2026-11-21T23:00:00.000Z", snapshot_count: count }]);
      expect(resticCalls(ran).map((call) => subcommandOf(call.args))).toEqual(["forget", "snapshots"]);
    },
  );

  it("a group that removes nothing (remove: null) counts 0", async () => {
    const ran = await runJobForTest(
      createForgetJob,
      forgetCommand({ forget_groups: [{ tag: "t4", keep: { last: 1 } }] }),
      { replay: replayForget("0.14.0", "forget-dry-group-tags") },
    );
    expect(ran.outcome.status).toBe("succeeded");
    expect(linesOf(ran, "agent")[0]).toMatch(/^forget tag t4: removed \d+ snapshots? /);
  });

  it.each([
    ["0.18.0", "err-locked-forget-json", 11],
    ["0.14.0", "err-locked-forget-json", 1],
  ] as const)(
    "%s %s: fails with restic's reason, stops, and reports no forget time",
    async (version, name, code) => {
      const ran = await runJobForTest(createForgetJob, twoGroups(), {
        replay: replayForget(version, name),
        version,
      });
      expect(ran.outcome).toEqual({
        status: "failed",
        exit_code: code,
        error: `tag t1: ${recordedLockedError(version)}`,
      });
      expect(resticCalls(ran, "forget")).toHaveLength(1);
      expect(ran.reports).toEqual([]);
      expect(ran.stats).toEqual([]);
    },
  );

  it("when a later group fails after an earlier one removed snapshots, the changed list is still reported", async () => {
    let forgets = 0;
    const ran = await runJobForTest(createForgetJob, twoGroups(), {
      replay: (subcommand) => {
        if (subcommand === "snapshots") {
          return fixture("0.18.0", "snapshots-after-forget");
        }
        forgets += 1;
        return fixture("0.18.0", forgets === 1 ? "forget-tag" : "err-locked-forget-json");
      },
    });
    expect(ran.outcome).toMatchObject({
      status: "failed",
      exit_code: 11,
      error: expect.stringMatching(/^tag t2: /),
    });
    expect(ran.reports).toHaveLength(1);
    expect(ran.stats).toEqual([]);
  });

  it("a failing pre-hook runs no forget", async () => {
    const ran = await runJobForTest(createForgetJob, forgetCommand({ pre_hook: "exit 3" }), {
      replay: replayForget("0.18.0"),
      realHooks: true,
    });
    expect(ran.outcome).toEqual({ status: "failed", exit_code: null, error: "pre-hook failed (exit 3)" });
    expect(resticCalls(ran)).toEqual([]);
  });

  it("a cancel during a group reports cancelled and runs no further group", async () => {
    const controller = new AbortController();
    const ran = await runJobForTest(createForgetJob, twoGroups(), {
      replay: (subcommand) => {
        if (subcommand === "forget") {
          controller.abort();
        }
        return fixture("0.18.0", "forget-tag");
      },
      signal: controller.signal,
    });
    expect(ran.outcome.status).toBe("cancelled");
    expect(resticCalls(ran, "forget")).toHaveLength(1);
    expect(ran.stats).toEqual([]);
  });
});

describe("forget of named snapshots (snapshot_ids, protocol 7)", () => {
  const ID_A = "a".repeat(64);
  const ID_B = "b".repeat(64);
  const byIds = (ids: string[]) => forgetCommand({ forget_groups: [], snapshot_ids: ids });

  it("runs one restic forget with exactly the ids: no policy flag, no --tag, never --prune; then reports the list", async () => {
    const ran = await runJobForTest(createForgetJob, byIds([ID_A, ID_B]), {
      replay: (subcommand) =>
        subcommand === "snapshots" ? fixture("0.18.0", "snapshots-after-forget") : EMPTY_OK,
    });
    expect(ran.outcome.status).toBe("succeeded");
    const forgets = resticCalls(ran, "forget");
    expect(forgets).toHaveLength(1);
    const args = forgets[0]?.args ?? [];
    expect(args.slice(args.indexOf("forget"))).toEqual(["forget", ID_A, ID_B]);
    expect(args.some((arg) => arg.startsWith("--keep") || arg === "--prune" || arg === "--tag")).toBe(false);
    expect(ran.outcome.summary).toMatchObject({ snapshots_removed: 2, snapshot_ids: [ID_A, ID_B] });
    expect(resticCalls(ran, "snapshots")).toHaveLength(1);
    expect(ran.reports.length).toBeGreaterThan(0);
    expect(ran.stats.every((stats) => stats.last_forget_at === undefined)).toBe(true);
  });

  it("fails naming the id when restic ignores one it cannot find (restic still exits 0)", async () => {
    const ran = await runJobForTest(createForgetJob, byIds([ID_A]), {
      replay: (subcommand) =>
        subcommand === "snapshots"
          ? fixture("0.14.0", "snapshots-after-forget")
          : {
              stdout: "",
              stderr: `Ignoring "${ID_A}": no matching ID found for prefix "${ID_A}"\n`,
              exitCode: 0,
            },
    });
    expect(ran.outcome.status).toBe("failed");
    expect(ran.outcome.error).toContain(ID_A);
    expect(ran.outcome.error).toContain("no such snapshot");
  });

  it("refuses ids together with groups before starting anything", async () => {
    const ran = await runJobForTest(createForgetJob, forgetCommand({ snapshot_ids: [ID_A] }), {
      replay: () => EMPTY_OK,
    });
    expect(ran.outcome.status).toBe("failed");
    expect(resticCalls(ran)).toHaveLength(0);
  });
});
