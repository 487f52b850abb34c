/**
 * Real restic against a dead repository (a rest-server URL on a port nobody listens on) behind a
 * real agent: 0.18 retries for up to 15 minutes, so the job's per-kind bound stops it and the job
 * fails naming the bound and restic's last error; 0.14 does not retry a refused connection and
 * fails at once, well inside the bound, which the repository guard reads as an unreachable
 * repository.
 */
import { describe, expect, it } from "vitest";
import { checkCommand, finishedOf, logLines, runJob, startHarness } from "../testing/agent-harness.js";
import { deadRestUrl } from "../testing/rest-server.js";
import { useTestServer } from "../testing/test-server.js";
import { resticBinary, resticNote } from "../testing/tools.js";

const server = useTestServer();

const restic18 = resticBinary("0.18") ?? "";
const restic14 = resticBinary("0.14") ?? "";

describe.skipIf(restic18 === "")(`a dead repository with restic 0.18${resticNote("0.18")}`, () => {
  it("stops the retrying check at its bound and fails with the bound and restic's last error", async () => {
    const harness = await startHarness(server(), { resticCommand: restic18, jobTimeouts: { check: 6_000 } });
    try {
      const url = await deadRestUrl();
      harness.peer.send("config.update", {
        slot: "repo",
        repository: { url, username: "alice", password: "dead-repo-Pa55" },
      });
      const reports = await runJob(harness, checkCommand(), 60_000);
      // Stopped by the bound, not after restic's own 15 minutes: the error and the agent's line
      // below name it. How long after the bound it ended is the machine's speed.
      const finished = finishedOf(reports);
      expect(finished?.status).toBe("failed");
      expect(finished?.error).toMatch(
        /^timed out after 6 s; last restic error: Stat\(<config\/>\) returned error, retrying after .*connection refused$/,
      );
      const lines = logLines(reports);
      expect(lines.filter((line) => line.includes("returned error, retrying after")).length).toBeGreaterThan(
        1,
      );
      expect(lines).toContain(
        "agent: stopping the job: it ran longer than its maximum of 6 s (FLEETBACK_JOB_TIMEOUT_CHECK on this agent)",
      );
      // restic clears its status line before "signal terminated received": no terminal codes get through.
      expect(lines.join("\n")).not.toContain("\x1b");
      expect(lines.join("\n")).not.toContain("dead-repo-Pa55");
    } finally {
      await harness.stop();
    }
    // A hang guard above the reports' own 60 s: a 6 s bound plus restic's start and cleanup.
  }, 90_000);
});

describe.skipIf(restic14 === "")(`a dead repository with restic 0.14${resticNote("0.14")}`, () => {
  it("fails at once, long before the bound, as an unreachable repository", async () => {
    const harness = await startHarness(server(), { resticCommand: restic14, jobTimeouts: { check: 60_000 } });
    try {
      const url = await deadRestUrl();
      harness.peer.send("config.update", { slot: "repo", repository: { url, password: "dead-repo-Pa55" } });
      const finished = finishedOf(await runJob(harness, checkCommand(), 60_000));
      expect(finished?.status).toBe("failed");
      // restic's own "Fatal: unable to open config file: … connection refused" is in the log.
      expect(finished?.error).toBe("the repository did not answer (connection refused): it is unreachable");
      expect(finished?.repository_unreachable).toBe(true);
    } finally {
      await harness.stop();
    }
  });
});
