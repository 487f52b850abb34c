import type { CommandRunCheck } from "@fleetback/protocol";
import { describe, expect, it } from "vitest";
import { fixture, linesOf, resticCalls, runJobForTest } from "../testing/job-run.js";
import { CHECK_ERRORS_ERROR, createCheckJob } from "./check-job.js";

const AT = "2026-11-21T23:00:00.000Z";

function checkCommand(overrides: Partial<CommandRunCheck> = {}): CommandRunCheck {
  return {
    job_id: "01M807SKJ8H7QEZZS1A0ZWSK9T",
    kind: "check",
    requires_admin_creds: false,
    check: {},
    ...overrides,
  };
}

describe("check", () => {
  it("runs text-mode check with --read-data-subset=<subset> when one is given", async () => {
    const ran = await runJobForTest(createCheckJob, checkCommand({ check: { read_data_subset: "5%" } }), {
      replay: () => fixture("0.18.0", "check-subset"),
    });
    expect(resticCalls(ran).map((call) => call.args)).toEqual([
      ["--cache-dir", "/state/cache", "check", "--read-data-subset=5%"],
    ]);
    expect(ran.outcome).toEqual({ status: "succeeded", exit_code: 0 });
    expect(linesOf(ran, "stdout")).toContain("read 5.0% of data packs");
  });

  it("without a subset passes no flag", async () => {
    const ran = await runJobForTest(createCheckJob, checkCommand(), {
      replay: () => fixture("0.14.0", "check"),
    });
    expect(resticCalls(ran)[0]?.args).toEqual(["--cache-dir", "/state/cache", "check"]);
  });

  it.each(["0.14.0", "0.18.0"] as const)("%s clean repository: succeeds and reports ok", async (version) => {
    const ran = await runJobForTest(createCheckJob, checkCommand(), {
      replay: () => fixture(version, "check"),
      version,
    });
    expect(ran.outcome).toEqual({ status: "succeeded", exit_code: 0 });
    expect(ran.stats).toEqual([{ last_check_status: "ok", last_check_at: AT }]);
    const stdout = linesOf(ran, "stdout");
    expect(stdout).toContain("no errors were found");
    // The 100% progress line closes its phase in the log and also reaches job.progress.
    expect(stdout).toContain("[0:00] 100.00%  6 / 6 snapshots");
    expect(ran.progress.at(-1)?.progress).toEqual({ percent_done: 1, files_done: 0, bytes_done: 0 });
  });

  it.each(["0.14.0", "0.18.0"] as const)(
    "%s damaged pack: fails the job and reports errors",
    async (version) => {
      const ran = await runJobForTest(createCheckJob, checkCommand(), {
        replay: () => fixture(version, "check-corrupt"),
        version,
      });
      expect(ran.outcome).toEqual({ status: "failed", exit_code: 1, error: CHECK_ERRORS_ERROR });
      expect(ran.stats).toEqual([{ last_check_status: "errors", last_check_at: AT }]);
      expect(linesOf(ran, "stderr")).toContain("Fatal: repository contains errors");
    },
  );

  it.each([
    ["0.14.0", 1],
    ["0.18.0", 11],
  ] as const)("%s locked repository: the check could not run, status failed", async (version, code) => {
    const ran = await runJobForTest(createCheckJob, checkCommand(), {
      replay: () => fixture(version, "err-locked-check"),
      version,
    });
    expect(ran.outcome).toMatchObject({
      status: "failed",
      exit_code: code,
      error: expect.stringMatching(/^unable to create lock in backend: repository is already locked/),
    });
    expect(ran.stats).toEqual([{ last_check_status: "failed", last_check_at: AT }]);
  });

  it("a cancelled check reports no status", async () => {
    const controller = new AbortController();
    controller.abort();
    const ran = await runJobForTest(createCheckJob, checkCommand(), {
      replay: () => fixture("0.18.0", "check"),
      signal: controller.signal,
    });
    expect(ran.outcome.status).toBe("cancelled");
    expect(ran.stats).toEqual([]);
  });

  it("refuses a subset restic would not accept, before starting anything", async () => {
    const ran = await runJobForTest(createCheckJob, checkCommand({ check: { read_data_subset: "--x" } }), {
      replay: () => fixture("0.18.0", "check"),
    });
    expect(ran.outcome).toMatchObject({ status: "failed", exit_code: null });
    expect(ran.calls).toEqual([]);
    expect(ran.stats).toEqual([]);
  });
});
