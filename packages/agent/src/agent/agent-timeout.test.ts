/**
 * Real restic against a dead repository (a rest-server URL on a port nobody listens on) behind a
 * real agent: 0.18 retries for up to 15 minutes, so the job's per-kind bound stops it and the job
 * fails naming the bound and restic's last error; 0.14 does not retry a refused connection and
 * fails at once, well inside the bound, which the repository guard reads as an unreachable
 * repository.
 */
import { createServer } from "node:net";
import type { CommandRunCheck } from "@fleetback/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { finishedOf, jobReports, logLines, nextUlid, startHarness } from "../testing/agent-harness.js";
import { startTestServer, type TestServer } from "../testing/test-server.js";
import { resticBinary, resticNote } from "../testing/tools.js";

let server: TestServer;
beforeEach(async () => {
  server = await startTestServer();
});
afterEach(async () => {
  await server.stop();
});

/** A loopback port that was free a moment ago and has nobody listening now. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const address = probe.address();
  await new Promise((resolve) => probe.close(resolve));
  if (address === null || typeof address === "string") {
    throw new Error("no port");
  }
  return address.port;
}

const checkCommand = (): CommandRunCheck => ({
  job_id: nextUlid(),
  requires_admin_creds: false,
  kind: "check",
  check: {},
});

const restic18 = resticBinary("0.18") ?? "";
const restic14 = resticBinary("0.14") ?? "";

describe.skipIf(restic18 === "")(`a dead repository with restic 0.18${resticNote("0.18")}`, () => {
  it("stops the retrying check at its bound and fails with the bound and restic's last error", async () => {
    const harness = await startHarness(server, { resticCommand: restic18, jobTimeouts: { check: 6_000 } });
    try {
      const url = `rest:http://127.0.0.1:${await closedPort()}/dead`;
      harness.peer.send("config.update", {
        slot: "repo",
        repository: { url, username: "alice", password: "dead-repo-Pa55" },
      });
      const job = checkCommand();
      harness.peer.send("command.run", job);
      const reports = await jobReports(harness.peer, job.job_id, 60_000);
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
    const harness = await startHarness(server, { resticCommand: restic14, jobTimeouts: { check: 60_000 } });
    try {
      const url = `rest:http://127.0.0.1:${await closedPort()}/dead`;
      harness.peer.send("config.update", { slot: "repo", repository: { url, password: "dead-repo-Pa55" } });
      const job = checkCommand();
      harness.peer.send("command.run", job);
      const finished = finishedOf(await jobReports(harness.peer, job.job_id, 60_000));
      expect(finished?.status).toBe("failed");
      // restic's own "Fatal: unable to open config file: … connection refused" is in the log.
      expect(finished?.error).toBe("the repository did not answer (connection refused): it is unreachable");
      expect(finished?.repository_unreachable).toBe(true);
    } finally {
      await harness.stop();
    }
  });
});
