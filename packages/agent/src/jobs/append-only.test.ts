/**
 * Forget and prune on storage that refuses deletes (issue 31), on the stderr restic 0.18 and 0.14
 * printed against rest-server --append-only (agent/agent-append-only.test.ts runs the real thing).
 */
import type { CommandRunForget, CommandRunPrune } from "@fleetback/protocol";
import { describe, expect, it } from "vitest";
import type { Recording } from "../restic/replay-adapter.js";
import {
  ADMIN_PASSWORD,
  fixture,
  linesOf,
  recordedScenario,
  resticCalls,
  runJobForTest,
} from "../testing/job-run.js";
import { APPEND_ONLY_ERROR, isRefusedDelete } from "./append-only.js";
import { createForgetJob } from "./forget-job.js";
import { createPruneJob } from "./prune-job.js";

const S1 = recordedScenario("0.18.0").snapshots.S1;
const ADMIN = { url: "rest:http://127.0.0.1:8000/alice/", username: "admin", password: ADMIN_PASSWORD };
const JOB_ID = "01M807SKJ8H7QEZZS1A0ZWSK9T";

/** 0.18: every delete fails at once, and forget still exits 0. */
const REFUSED_0_18 = `Remove(<snapshot/${S1.id.slice(0, 10)}>) failed: unexpected HTTP response (403): 403 Forbidden
unable to remove snapshot/${S1.id} from the repository
`;
/** 0.14: the same delete is retried for ~45 s. */
const RETRYING_0_14 = `Remove(<snapshot/${S1.id.slice(0, 10)}>) returned error, retrying after 552.330144ms: blob not removed, server response: 403 Forbidden (403)
Remove(<snapshot/${S1.id.slice(0, 10)}>) returned error, retrying after 1.080381816s: blob not removed, server response: 403 Forbidden (403)
`;

const policyForget = (): CommandRunForget => ({
  job_id: JOB_ID,
  kind: "forget",
  requires_admin_creds: false,
  forget_groups: [{ tag: "t1", keep: { last: 1 } }],
});
const idForget = (): CommandRunForget => ({ ...policyForget(), forget_groups: [], snapshot_ids: [S1.id] });
const prune = (): CommandRunPrune => ({ job_id: JOB_ID, kind: "prune", requires_admin_creds: true });

/** `forget` (or `prune`) answers `recording`; the listing afterwards still holds every snapshot. */
function replay(recording: Recording) {
  return (subcommand: string) => (subcommand === "snapshots" ? fixture("0.18.0", "snapshots") : recording);
}

describe("refused deletes", () => {
  it("recognises restic's Remove lines with a 403, never a lock's", () => {
    for (const line of [...REFUSED_0_18.split("\n"), ...RETRYING_0_14.split("\n")]) {
      expect(isRefusedDelete(line), line).toBe(line.startsWith("Remove("));
    }
    expect(
      isRefusedDelete(
        "Remove(<lock/0123456789>) returned error, retrying after 1s: server response: 403 Forbidden (403)",
      ),
    ).toBe(false);
    expect(isRefusedDelete("Remove(<data/0123456789>) failed: unexpected HTTP response (500)")).toBe(false);
  });

  it("0.18 policy forget that exits 0 after refused deletes fails with the append-only sentence", async () => {
    const ran = await runJobForTest(createForgetJob, policyForget(), {
      replay: replay({ ...fixture("0.18.0", "forget-tag"), stderr: REFUSED_0_18 }),
    });
    expect(ran.outcome).toEqual({ status: "failed", exit_code: 0, error: `tag t1: ${APPEND_ONLY_ERROR}` });
    expect(linesOf(ran, "agent")).toEqual([APPEND_ONLY_ERROR]);
    // restic ran to its end (it does not retry), and the list it may have changed is reported.
    expect(resticCalls(ran, "forget")[0]?.signal?.aborted).toBe(false);
    expect(ran.reports).toHaveLength(1);
    expect(ran.stats).toEqual([]);
  });

  it("0.18 forget by id that exits 0 after a refused delete fails with the sentence", async () => {
    const ran = await runJobForTest(createForgetJob, idForget(), {
      replay: replay({ stdout: "", stderr: REFUSED_0_18, exitCode: 0 }),
    });
    expect(ran.outcome).toEqual({ status: "failed", exit_code: 0, error: APPEND_ONLY_ERROR });
    expect(ran.reports).toHaveLength(1);
  });

  it("0.14 retrying a refused delete is stopped at once, for forget by policy and by id", async () => {
    for (const command of [policyForget(), idForget()]) {
      const ran = await runJobForTest(createForgetJob, command, {
        replay: replay({ stdout: "", stderr: RETRYING_0_14, exitCode: 1 }),
        version: "0.14.0",
      });
      expect(ran.outcome.status).toBe("failed");
      expect(ran.outcome.error).toMatch(new RegExp(`${APPEND_ONLY_ERROR.replace(/[()]/g, "\\$&")}$`));
      expect(resticCalls(ran, "forget")[0]?.signal?.aborted).toBe(true);
      expect(linesOf(ran, "agent")).toContain(
        "the repository refused a delete (HTTP 403); restic is stopped instead of left to retry it",
      );
    }
  });

  it("prune fails with the sentence: 0.18's Fatal line, and 0.14 stopped while retrying", async () => {
    const prune018 = await runJobForTest(createPruneJob, prune(), {
      admin: ADMIN,
      replay: replay({
        ...fixture("0.18.0", "prune"),
        stderr:
          "Remove(<index/cb3602a908>) failed: unexpected HTTP response (403): 403 Forbidden\nFatal: unexpected HTTP response (403): 403 Forbidden\n",
        exitCode: 1,
      }),
    });
    expect(prune018.outcome).toEqual({ status: "failed", exit_code: 1, error: APPEND_ONLY_ERROR });
    expect(prune018.stats).toEqual([]);
    const prune014 = await runJobForTest(createPruneJob, prune(), {
      admin: ADMIN,
      version: "0.14.0",
      replay: replay({
        stdout: "",
        stderr:
          "Remove(<index/218add6461>) returned error, retrying after 552.330144ms: blob not removed, server response: 403 Forbidden (403)\n",
        exitCode: 1,
      }),
    });
    expect(prune014.outcome).toEqual({ status: "failed", exit_code: 1, error: APPEND_ONLY_ERROR });
    expect(resticCalls(prune014, "prune")[0]?.signal?.aborted).toBe(true);
  });

  it("a cancel stays a cancel", async () => {
    const controller = new AbortController();
    const ran = await runJobForTest(createForgetJob, idForget(), {
      replay: (subcommand) => {
        controller.abort();
        return replay({ stdout: "", stderr: RETRYING_0_14, exitCode: 1 })(subcommand);
      },
      signal: controller.signal,
    });
    expect(ran.outcome.status).toBe("cancelled");
  });
});
