/**
 * Real restic 0.18 and 0.14 behind a real agent on a real socket: init against a local repository
 * and against rest-server with HTTP credentials, a backup whose rest-server login differs from the
 * repository password, and canary passwords that must appear nowhere but in the child's
 * environment.
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { NO_CREDENTIALS_ERROR } from "../jobs/repository-refusal.js";
import {
  backupCommand,
  finishedOf,
  type Harness,
  initCommand,
  initRepository,
  logLines,
  runJob,
  startHarness,
  tempRepository,
} from "../testing/agent-harness.js";
import { hasRestServer, restServerNote, startRestServer } from "../testing/rest-server.js";
import { useTestServer } from "../testing/test-server.js";
import { RESTIC_VERSIONS, resticBinary, resticNote } from "../testing/tools.js";

const CANARY = "canary-7f3e9d1b-Pa55";
const LOGIN_CANARY = "login-canary-2c4a8e60";

const server = useTestServer();

/** All the agent sent, logged and put in an argv: where no secret may ever show. */
function everythingSaid(harness: Harness): string {
  return [
    ...harness.peer.received.map((message) => JSON.stringify(message)),
    harness.log.text(),
    ...harness.calls.flatMap((call) => [call.command, ...call.args]),
  ].join("\n");
}

describe.each(RESTIC_VERSIONS)("restic %s", (version) => {
  const restic = resticBinary(version) ?? "";

  describe.skipIf(restic === "")(`init through the agent${resticNote(version)}`, () => {
    it("initialises a local repository, then succeeds again with 'already exists', leaking no secret", async () => {
      const harness = await startHarness(server(), {
        resticCommand: restic,
        parentEnv: {
          ...process.env,
          RESTIC_PASSWORD: "parent-password",
          RESTIC_REPOSITORY: "/tmp/not-this-one",
        },
      });
      expect(harness.peer.received[0]?.payload).toMatchObject({ tool_version: `${version}.0` });
      const repo = await tempRepository();
      harness.peer.send("config.update", { slot: "repo", repository: { url: repo, password: CANARY } });

      const first = initCommand();
      const reports = await runJob(harness, first);
      expect(reports[0]?.type).toBe("job.started");
      expect(finishedOf(reports)).toEqual({ job_id: first.job_id, status: "succeeded", exit_code: 0 });
      // 0.18 answers --json with a JSON line, 0.14 ignores --json... and is not given it anyway.
      const created =
        version === "0.14" ? `created restic repository [0-9a-f]+ at ${repo}` : `"initialized".*"${repo}"`;
      expect(logLines(reports).join("\n")).toMatch(new RegExp(created));

      const second = initCommand();
      const again = await runJob(harness, second);
      expect(finishedOf(again)).toEqual({ job_id: second.job_id, status: "succeeded", exit_code: 1 });
      expect(logLines(again)).toContain("agent: the repository already exists; nothing to do");

      const initCalls = harness.calls.filter((call) => call.args.includes("init"));
      expect(initCalls).toHaveLength(2);
      expect(initCalls[0]?.env.RESTIC_REPOSITORY).toBe(repo);
      expect(initCalls[0]?.args.includes("--json")).toBe(version !== "0.14");
      await harness.stop();

      const everything = everythingSaid(harness);
      expect(everything).not.toContain(CANARY);
      expect(everything).not.toContain("parent-password");
    });

    it.skipIf(!hasRestServer())(
      `initialises a rest-server repository with username and password merged into the URL${restServerNote()}`,
      async () => {
        const rest = await startRestServer("alice", CANARY);
        try {
          const harness = await startHarness(server(), { resticCommand: restic });
          const repository = { url: rest.url, username: "alice", password: CANARY };
          const reports = await initRepository(harness, repository);
          expect(finishedOf(reports)).toMatchObject({ status: "succeeded", exit_code: 0 });
          const [call] = harness.calls.filter((entry) => entry.args.includes("init"));
          // The same password authenticates to rest-server (URL) and opens the repository.
          expect(call?.env.RESTIC_REPOSITORY).toBe(rest.url.replace("http://", `http://alice:${CANARY}@`));
          expect(call?.env.RESTIC_PASSWORD).toBe(CANARY);
          await harness.stop();
          const everything = everythingSaid(harness);
          expect(everything).not.toContain(CANARY);
        } finally {
          await rest.stop();
        }
      },
    );

    it.skipIf(!hasRestServer())(
      `backs up to rest-server with a login password apart from the repository password${restServerNote()}`,
      async () => {
        // Protocol 11: htpasswd holds LOGIN_CANARY; CANARY only opens the repository. Before, the
        // agent merged the repository password into the URL and rest-server refused the login.
        const rest = await startRestServer("alice", LOGIN_CANARY);
        const harness = await startHarness(server(), { resticCommand: restic });
        try {
          const repository = {
            url: rest.url,
            username: "alice",
            password: CANARY,
            login_password: LOGIN_CANARY,
          };
          expect(finishedOf(await initRepository(harness, repository))).toMatchObject({
            status: "succeeded",
          });
          // The init lists the new repository (issue 31: an adopted one shows its snapshots).
          expect((await harness.peer.next("snapshots.report")).payload.snapshots).toEqual([]);

          const tree = await mkdtemp(join(tmpdir(), "fleetback-src-"));
          await writeFile(join(tree, "a.txt"), "hello fleetback\n");
          const reports = await runJob(harness, backupCommand([tree]));
          expect(finishedOf(reports)).toMatchObject({ status: "succeeded", exit_code: 0 });
          const call = harness.calls.find((entry) => entry.args.includes("backup"));
          expect(call?.env.RESTIC_REPOSITORY).toBe(
            rest.url.replace("http://", `http://alice:${LOGIN_CANARY}@`),
          );
          expect(call?.env.RESTIC_PASSWORD).toBe(CANARY);
          // The listing after the backup logs in the same way.
          expect((await harness.peer.next("snapshots.report")).payload.snapshots).toHaveLength(1);
        } finally {
          await harness.stop();
          await rest.stop();
        }
        const everything = everythingSaid(harness);
        expect(everything).not.toContain(CANARY);
        expect(everything).not.toContain(LOGIN_CANARY);
      },
    );

    it("fails init when no credentials were pushed, without running restic", async () => {
      const harness = await startHarness(server(), { resticCommand: restic });
      const job = initCommand();
      const reports = await runJob(harness, job);
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
