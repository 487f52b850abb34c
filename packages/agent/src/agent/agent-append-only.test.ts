/**
 * Issue 31, "forget on append-only storage says it worked": real restic 0.18 and 0.14 behind a
 * real agent against rest-server --append-only. The repository is filled first on the same data
 * served normally (three backups, one forgotten, so prune has data to delete), then forget by
 * policy, forget by id and prune must each fail with the append-only sentence, and restic itself
 * must still list every snapshot afterwards (a listing that takes a lock: none was left behind).
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AgentEnvelope, Snapshot } from "@fleetback/protocol";
import { describe, expect, it } from "vitest";
import { APPEND_ONLY_ERROR } from "../jobs/append-only.js";
import { finishedOf, logLines, nextUlid, runJob, startHarness } from "../testing/agent-harness.js";
import {
  fillRepository,
  hasRestServer,
  listedSnapshotIds,
  resticOn,
  restServerNote,
  startRestServer,
} from "../testing/rest-server.js";
import { useTestServer } from "../testing/test-server.js";
import { RESTIC_VERSIONS, resticBinary, resticNote } from "../testing/tools.js";

const USER = "keeper";
const PASSWORD = "append-only-pw";
/** Hang guards far above the run time on a loaded machine (0.14 alone retried ~45 s a job). */
const JOB_TIMEOUT_MS = 240_000;
const TEST_TIMEOUT_MS = 900_000;
const STOPPED = "the repository refused a delete (HTTP 403); restic is stopped instead of left to retry it";

const server = useTestServer();

function reportedLists(reports: AgentEnvelope[]): Snapshot[][] {
  return reports.flatMap((message) =>
    message.type === "snapshots.report" ? [message.payload.snapshots] : [],
  );
}

describe.each(RESTIC_VERSIONS)("restic %s", (version) => {
  const restic = resticBinary(version) ?? "";

  it.skipIf(restic === "" || !hasRestServer())(
    `forget by policy and by id, and prune, fail on append-only storage and every snapshot stays${resticNote(version)}${restServerNote()}`,
    async () => {
      const cacheDir = await mkdtemp(join(tmpdir(), "fleetback-cache-"));
      const filling = await startRestServer(USER, PASSWORD);
      try {
        const fill = resticOn(restic, filling, { user: USER, password: PASSWORD, cacheDir });
        await fillRepository(fill);
        await fill("forget", "--tag", "t", "--keep-last", "2");
      } finally {
        await filling.stop();
      }

      const rest = await startRestServer(USER, PASSWORD, { appendOnly: true, dir: filling.dir });
      const harness = await startHarness(server(), { resticCommand: restic, reportWaitMs: JOB_TIMEOUT_MS });
      try {
        const restic_ = resticOn(restic, rest, { user: USER, password: PASSWORD, cacheDir });
        const before = await listedSnapshotIds(restic_);
        expect(before).toHaveLength(2);
        const repository = { url: rest.url, username: USER, password: PASSWORD };
        harness.peer.send("config.update", { slot: "repo", repository });
        harness.peer.send("config.update", { slot: "admin", repository });
        const common = { requires_admin_creds: false };

        const byPolicy = await runJob(harness, {
          ...common,
          job_id: nextUlid(),
          kind: "forget",
          forget_groups: [{ tag: "t", keep: { last: 1 } }],
        });
        expect(finishedOf(byPolicy)).toMatchObject({
          status: "failed",
          error: `tag t: ${APPEND_ONLY_ERROR}`,
        });

        const byId = await runJob(harness, {
          ...common,
          job_id: nextUlid(),
          kind: "forget",
          forget_groups: [],
          snapshot_ids: [before[0] ?? ""],
        });
        expect(finishedOf(byId)).toMatchObject({ status: "failed", error: APPEND_ONLY_ERROR });

        const prune = await runJob(harness, {
          job_id: nextUlid(),
          kind: "prune",
          requires_admin_creds: true,
        });
        expect(finishedOf(prune)).toMatchObject({ status: "failed", error: APPEND_ONLY_ERROR });

        for (const reports of [byPolicy, byId, prune]) {
          const lines = logLines(reports);
          expect(lines).toContain(`agent: ${APPEND_ONLY_ERROR}`);
          // 0.14 retries each refused delete for ~45 s: the agent stops it at the first refusal.
          expect(lines.includes(`agent: ${STOPPED}`)).toBe(version === "0.14");
          expect(lines.some((line) => line.includes("asm_amd64.s"))).toBe(false);
          // Whatever list the agent reported is the true one.
          for (const listed of reportedLists(reports)) {
            expect(listed.map((snapshot) => snapshot.id).sort()).toEqual(before);
          }
        }
        expect(await listedSnapshotIds(restic_)).toEqual(before);
      } finally {
        await harness.stop();
        await rest.stop();
      }
    },
    TEST_TIMEOUT_MS,
  );
});
