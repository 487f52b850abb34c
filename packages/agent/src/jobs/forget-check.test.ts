import type { CommandRunForget } from "@fleetback/protocol";
import { describe, expect, it } from "vitest";
import { EMPTY_OK, fixture, linesOf, recordedScenario, runJobForTest } from "../testing/job-run.js";
import { stillListedError } from "./forget-check.js";
import { createForgetJob } from "./forget-job.js";

const { S1 } = recordedScenario("0.18.0").snapshots;

const policyForget = (): CommandRunForget => ({
  job_id: "01M807SKJ8H7QEZZS1A0ZWSK9T",
  kind: "forget",
  requires_admin_creds: false,
  forget_groups: [{ tag: "t1", keep: { last: 1 } }],
});

describe("a forget is what the repository lists afterwards (issue 31)", () => {
  it("fails when a snapshot restic said it removed is still listed, and reports the true list", async () => {
    // forget-tag removes S1; `snapshots` is the listing from before, S1 still in it.
    const ran = await runJobForTest(createForgetJob, policyForget(), {
      replay: (subcommand) => fixture("0.18.0", subcommand === "snapshots" ? "snapshots" : "forget-tag"),
    });
    const error = `restic said it removed snapshot ${S1.short_id}, but the repository still lists it afterwards`;
    expect(ran.outcome).toEqual({ status: "failed", exit_code: 0, error });
    expect(linesOf(ran, "agent")).toContain(error);
    expect(ran.reports).toHaveLength(1);
    expect(ran.reports[0]?.snapshots.map((snapshot) => snapshot.id)).toContain(S1.id);
    expect(ran.stats).toEqual([]);
  });

  it("fails a forget by id whose snapshot is still listed", async () => {
    const ran = await runJobForTest(
      createForgetJob,
      { ...policyForget(), forget_groups: [], snapshot_ids: [S1.id] },
      { replay: (subcommand) => (subcommand === "snapshots" ? fixture("0.18.0", "snapshots") : EMPTY_OK) },
    );
    expect(ran.outcome).toEqual({
      status: "failed",
      exit_code: 0,
      error: `restic said it removed snapshot ${S1.id}, but the repository still lists it afterwards`,
    });
    expect(ran.reports).toHaveLength(1);
  });

  it("keeps restic's word when the listing itself fails", async () => {
    const ran = await runJobForTest(createForgetJob, policyForget(), {
      replay: (subcommand) =>
        subcommand === "snapshots"
          ? { stdout: "", stderr: "Fatal: unable to open repository\n", exitCode: 1 }
          : fixture("0.18.0", "forget-tag"),
    });
    expect(ran.outcome.status).toBe("succeeded");
    expect(ran.stats).toEqual([{ last_forget_at: "2026-11-21T23:00:00.000Z" }]);
  });

  it("names many snapshots briefly", () => {
    const ids = Array.from({ length: 22 }, (_, index) => index.toString(16).padStart(8, "0"));
    expect(stillListedError(ids)).toBe(
      `restic said it removed snapshots ${ids.slice(0, 20).join(", ")} and 2 more, but the repository still lists them afterwards`,
    );
  });
});
