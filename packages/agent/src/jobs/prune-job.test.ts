import type { CommandRunPrune } from "@fleetback/protocol";
import { describe, expect, it } from "vitest";
import {
  ADMIN_PASSWORD,
  type FixtureVersion,
  fixture,
  linesOf,
  resticCalls,
  runJobForTest,
  subcommandOf,
} from "../testing/job-run.js";
import { RAW_DATA_STATS_ARGS, recordedRepoStats } from "../testing/recorded-stats.js";
import { createPruneJob } from "./prune-job.js";
import { PRUNE_STATS_TIMEOUT_MS } from "./raw-data-stats.js";
import { NO_ADMIN_CREDENTIALS_ERROR } from "./repository-job.js";

const ADMIN = { url: "rest:http://127.0.0.1:8000/alice/", username: "admin", password: ADMIN_PASSWORD };

function pruneCommand(overrides: Partial<CommandRunPrune> = {}): CommandRunPrune {
  return { job_id: "01M807SKJ8H7QEZZS1A0ZWSK9T", kind: "prune", requires_admin_creds: true, ...overrides };
}

function replayPrune(version: FixtureVersion, prune = "prune") {
  return (subcommand: string) => {
    if (subcommand === "stats") {
      return fixture(version, "stats-raw");
    }
    return subcommand === "snapshots" ? fixture(version, "snapshots") : fixture(version, prune);
  };
}

describe("prune", () => {
  it("fails clearly without admin credentials and starts nothing, even with repository credentials", async () => {
    const ran = await runJobForTest(createPruneJob, pruneCommand({ pre_hook: "echo no" }), {
      replay: replayPrune("0.18.0"),
      realHooks: true,
    });
    expect(ran.outcome).toEqual({ status: "failed", exit_code: null, error: NO_ADMIN_CREDENTIALS_ERROR });
    expect(ran.calls).toEqual([]);
    expect(linesOf(ran, "agent")).toEqual([
      "no admin credentials have been pushed to this agent; prune needs them",
    ]);
  });

  it("runs `prune` (text, no --json, never forget) with the admin slot's credentials", async () => {
    const ran = await runJobForTest(createPruneJob, pruneCommand({ bandwidth_up_kbps: 64 }), {
      replay: replayPrune("0.18.0"),
      admin: ADMIN,
    });
    const [prune] = resticCalls(ran, "prune");
    expect(prune?.args).toEqual(["--cache-dir", "/state/cache", "--limit-upload", "64", "prune"]);
    expect(prune?.env.RESTIC_PASSWORD).toBe(ADMIN_PASSWORD);
    expect(prune?.env.RESTIC_REPOSITORY).toBe(`rest:http://admin:${ADMIN_PASSWORD}@127.0.0.1:8000/alice/`);
    expect(resticCalls(ran, "forget")).toEqual([]);
    // Every restic call of the job uses the admin slot.
    expect(resticCalls(ran).every((call) => call.env.RESTIC_PASSWORD === ADMIN_PASSWORD)).toBe(true);
    expect(JSON.stringify(ran.lines)).not.toContain(ADMIN_PASSWORD);
  });

  it("0.18: reports last_prune_at with stored and uncompressed sizes and the ratio, then the snapshots", async () => {
    const ran = await runJobForTest(createPruneJob, pruneCommand(), {
      replay: replayPrune("0.18.0"),
      admin: ADMIN,
      version: "0.18.0",
    });
    expect(ran.outcome).toEqual({ status: "succeeded", exit_code: 0 });
    expect(resticCalls(ran).map((call) => subcommandOf(call.args))).toEqual(["prune", "stats", "snapshots"]);
    expect(resticCalls(ran, "stats")[0]?.args).toEqual(RAW_DATA_STATS_ARGS);
    expect(resticCalls(ran, "stats")[0]?.timeoutMs).toBe(PRUNE_STATS_TIMEOUT_MS);
    expect(ran.stats).toEqual([
      { ...recordedRepoStats("0.18.0"), last_prune_at: "2026-11-21T23:00:00.000Z" },
    ]);
    expect(ran.reports).toHaveLength(1);
    expect(linesOf(ran, "stdout")).toContain("done");
    expect(linesOf(ran, "stdout")).toContain("[0:00] 100.00%  1 / 1 packs repacked");
  });

  it("0.14: stored size and snapshot count only (no compression fields in its stats)", async () => {
    const ran = await runJobForTest(createPruneJob, pruneCommand(), {
      replay: replayPrune("0.14.0"),
      admin: ADMIN,
      version: "0.14.0",
    });
    expect(ran.stats).toEqual([
      { ...recordedRepoStats("0.14.0"), last_prune_at: "2026-11-21T23:00:00.000Z" },
    ]);
  });

  it("a failing stats run still reports last_prune_at", async () => {
    const ran = await runJobForTest(createPruneJob, pruneCommand(), {
      replay: (subcommand) =>
        subcommand === "stats" ? fixture("0.18.0", "err-wrong-password") : replayPrune("0.18.0")(subcommand),
      admin: ADMIN,
    });
    expect(ran.outcome.status).toBe("succeeded");
    expect(ran.stats).toEqual([{ last_prune_at: "2026-11-21T23:00:00.000Z" }]);
    expect(linesOf(ran, "agent")).toContain(
      "reading repository stats failed: Fatal: wrong password or no key found; the prune itself is not affected",
    );
  });

  it.each([
    ["0.14.0", 1],
    ["0.18.0", 11],
  ] as const)("%s locked: fails with the lock message, reports nothing", async (version, code) => {
    const ran = await runJobForTest(createPruneJob, pruneCommand(), {
      replay: replayPrune(version, "err-locked-prune"),
      admin: ADMIN,
      version,
    });
    expect(ran.outcome).toMatchObject({
      status: "failed",
      exit_code: code,
      error: expect.stringMatching(/^unable to create lock in backend/),
    });
    expect(ran.stats).toEqual([]);
    expect(ran.reports).toEqual([]);
  });
});
