/**
 * Real restic 0.18 and 0.14 behind a real agent on a real socket: init against a local repository
 * and against rest-server with HTTP credentials, and a canary password that must appear nowhere
 * but in the child's environment.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { NO_CREDENTIALS_ERROR } from "../jobs/init-job.js";
import { finishedOf, initCommand, jobReports, logLines, startHarness } from "../testing/agent-harness.js";
import { hasRestServer, restServerNote, startRestServer } from "../testing/rest-server.js";
import { startTestServer, type TestServer } from "../testing/test-server.js";
import { RESTIC_VERSIONS, resticBinary, resticNote } from "../testing/tools.js";

const CANARY = "canary-7f3e9d1b-Pa55";

let server: TestServer;
beforeEach(async () => {
  server = await startTestServer();
});
afterEach(async () => {
  await server.stop();
});

describe.each(RESTIC_VERSIONS)("restic %s", (version) => {
  const restic = resticBinary(version) ?? "";

  describe.skipIf(restic === "")(`init through the agent${resticNote(version)}`, () => {
    it("initialises a local repository, then succeeds again with 'already exists', leaking no secret", async () => {
      const harness = await startHarness(server, {
        resticCommand: restic,
        parentEnv: {
          ...process.env,
          RESTIC_PASSWORD: "parent-password",
          RESTIC_REPOSITORY: "/tmp/not-this-one",
        },
      });
      expect(harness.peer.received[0]?.payload).toMatchObject({ tool_version: `${version}.0` });
      const repo = join(await mkdtemp(join(tmpdir(), "fleetback-repo-")), "repo");
      harness.peer.send("config.update", { slot: "repo", repository: { url: repo, password: CANARY } });

      const first = initCommand();
      harness.peer.send("command.run", first);
      const reports = await jobReports(harness.peer, first.job_id);
      expect(reports[0]?.type).toBe("job.started");
      expect(finishedOf(reports)).toEqual({ job_id: first.job_id, status: "succeeded", exit_code: 0 });
      // 0.18 answers --json with a JSON line, 0.14 ignores --json... and is not given it anyway.
      const created =
        version === "0.14" ? `created restic repository [0-9a-f]+ at ${repo}` : `"initialized".*"${repo}"`;
      expect(logLines(reports).join("\n")).toMatch(new RegExp(created));

      const second = initCommand();
      harness.peer.send("command.run", second);
      const again = await jobReports(harness.peer, second.job_id);
      expect(finishedOf(again)).toEqual({ job_id: second.job_id, status: "succeeded", exit_code: 1 });
      expect(logLines(again)).toContain("agent: the repository already exists; nothing to do");

      const initCalls = harness.calls.filter((call) => call.args.includes("init"));
      expect(initCalls).toHaveLength(2);
      expect(initCalls[0]?.env.RESTIC_REPOSITORY).toBe(repo);
      expect(initCalls[0]?.args.includes("--json")).toBe(version !== "0.14");
      await harness.stop();

      const everything = [
        ...harness.peer.received.map((message) => JSON.stringify(message)),
        harness.log.text(),
        ...harness.calls.flatMap((call) => [call.command, ...call.args]),
      ].join("\n");
      expect(everything).not.toContain(CANARY);
      expect(everything).not.toContain("parent-password");
    });

    it.skipIf(!hasRestServer())(
      `initialises a rest-server repository with username and password merged into the URL${restServerNote()}`,
      async () => {
        const rest = await startRestServer("alice", CANARY);
        try {
          const harness = await startHarness(server, { resticCommand: restic });
          harness.peer.send("config.update", {
            slot: "repo",
            repository: { url: rest.url, username: "alice", password: CANARY },
          });
          const job = initCommand();
          harness.peer.send("command.run", job);
          const reports = await jobReports(harness.peer, job.job_id);
          expect(finishedOf(reports)).toMatchObject({ status: "succeeded", exit_code: 0 });
          const [call] = harness.calls.filter((entry) => entry.args.includes("init"));
          // The same password authenticates to rest-server (URL) and opens the repository.
          expect(call?.env.RESTIC_REPOSITORY).toBe(rest.url.replace("http://", `http://alice:${CANARY}@`));
          expect(call?.env.RESTIC_PASSWORD).toBe(CANARY);
          await harness.stop();
          const everything = [
            ...harness.peer.received.map((message) => JSON.stringify(message)),
            harness.log.text(),
            ...(call?.args ?? []),
          ].join("\n");
          expect(everything).not.toContain(CANARY);
        } finally {
          await rest.stop();
        }
      },
    );

    it("fails init when no credentials were pushed, without running restic", async () => {
      const harness = await startHarness(server, { resticCommand: restic });
      const job = initCommand();
      harness.peer.send("command.run", job);
      const reports = await jobReports(harness.peer, job.job_id);
      expect(finishedOf(reports)).toEqual({
        job_id: job.job_id,
        status: "failed",
        exit_code: null,
        error: NO_CREDENTIALS_ERROR,
      });
      expect(harness.calls.filter((call) => call.args.includes("init"))).toEqual([]);
      await harness.stop();
    });
  });
});
