import { describe, expect, it } from "vitest";
import { lockedError, settleGuardVerdict, unreachableError } from "./guard-outcome.js";
import type { JobOutcome } from "./job-types.js";

const failedOutcome: JobOutcome = {
  status: "failed",
  exit_code: 1,
  error: "Fatal: unable to save snapshot: context canceled",
};

const holder = {
  pid: 17541,
  host: "vm",
  user: "root",
  exclusive: false,
  createdAt: "2026-11-27 18:44:07",
  age: "52s",
};

describe("unreachableError", () => {
  it("says how long the repository did not answer, why, and who stopped restic", () => {
    expect(unreachableError({ cause: "connection refused", silentMs: 60_000, stoppedByAgent: true })).toBe(
      "the repository did not answer for 1 min (connection refused): it is unreachable; the agent stopped restic",
    );
    expect(unreachableError({ cause: "no such host", silentMs: 12, stoppedByAgent: false })).toBe(
      "the repository did not answer (no such host): it is unreachable",
    );
  });
});

describe("lockedError", () => {
  it("names the holder and the command an admin may run, never a credential", () => {
    expect(
      lockedError({ ...holder, unlockRan: true }, "rest:http://host-1:pa55@backup.example:8000/host-1/"),
    ).toBe(
      "the repository is locked by PID 17541 on vm (user root, created 2026-11-27 18:44:07, 52s ago); restic unlock left it, as restic does not find it stale (its process may still run on that host, and it is less than 30 minutes old). If no restic runs on vm any more, an admin may remove it with: restic -r rest:http://host-1:***@backup.example:8000/host-1/ unlock --remove-all",
    );
  });
});

describe("settleGuardVerdict", () => {
  const url = "rest:http://backup.example:8000/host-1/";
  const where = { url, subject: "the repository" } as const;

  it("marks an unreachable repository on the outcome", () => {
    expect(
      settleGuardVerdict(
        failedOutcome,
        { unreachable: { cause: "connection refused", silentMs: 60_000, stoppedByAgent: true } },
        where,
      ),
    ).toEqual({
      status: "failed",
      exit_code: 1,
      error:
        "the repository did not answer for 1 min (connection refused): it is unreachable; the agent stopped restic",
      repository_unreachable: true,
    });
  });

  it("puts the lock's holder in the error", () => {
    const settled = settleGuardVerdict(failedOutcome, { locked: { ...holder, unlockRan: false } }, where);
    expect(settled.error).toMatch(
      /^the repository is locked by PID 17541 on vm .*restic -r rest:http:\/\/backup\.example:8000\/host-1\/ unlock --remove-all$/,
    );
    expect(settled.repository_unreachable).toBeUndefined();
  });

  it("takes the error of the run after restic unlock over the first run's lock message", () => {
    expect(settleGuardVerdict(failedOutcome, { afterUnlock: { error: "Fatal: boom" } }, where).error).toBe(
      "Fatal: boom",
    );
  });

  it("leaves successes, cancels and failures without a verdict alone", () => {
    const verdict = { unreachable: { cause: "connection refused", silentMs: 1, stoppedByAgent: false } };
    const succeeded: JobOutcome = { status: "succeeded", exit_code: 0 };
    const cancelled: JobOutcome = { status: "cancelled", exit_code: null };
    expect(settleGuardVerdict(succeeded, verdict, where)).toBe(succeeded);
    expect(settleGuardVerdict(cancelled, verdict, where)).toBe(cancelled);
    expect(settleGuardVerdict(failedOutcome, undefined, where)).toBe(failedOutcome);
  });

  it("follows a copy's own words about which side failed, and names the mirror for its upkeep", () => {
    const verdict = {
      unreachable: { cause: "connection refused", silentMs: undefined, stoppedByAgent: false },
    };
    const copy = settleGuardVerdict(
      {
        status: "failed",
        exit_code: 1,
        error: "the mirror cannot be opened: Fatal: unable to open config file",
      },
      verdict,
      { url, subject: "the repository or its mirror" },
    );
    expect(copy).toMatchObject({
      error:
        "the mirror cannot be opened: Fatal: unable to open config file; the repository or its mirror did not answer (connection refused): one of them is unreachable",
      repository_unreachable: true,
    });
    expect(settleGuardVerdict(failedOutcome, verdict, { url, subject: "the mirror" }).error).toBe(
      "the mirror did not answer (connection refused): it is unreachable",
    );
  });
});
