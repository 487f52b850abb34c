/**
 * Copies to a mirror through a real agent on a real socket with real restic 0.18 and 0.14 and two
 * local repositories: without the mirror slot the copy fails before restic runs; the first copy
 * creates the mirror with the repository's chunker parameters, later ones bring over only what is
 * new (one with nothing new still reports every snapshot mirrored), and the mirror's own listing
 * records each source snapshot as `original` (a copy gets an id of its own in 0.14 and 0.18). Both passwords
 * reach restic through its environment only, and neither shows up in a log line.
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CommandRunCopy, CopySummary } from "@fleetback/protocol";
import { describe, expect, it } from "vitest";
import { NO_MIRROR_CREDENTIALS_ERROR } from "../jobs/copy-job.js";
import {
  backupCommand,
  finishedOf,
  initRepository,
  logLines,
  nextUlid,
  runJob,
  startHarness,
} from "../testing/agent-harness.js";
import { useTestServer } from "../testing/test-server.js";
import { RESTIC_VERSIONS, resticBinary, resticNote } from "../testing/tools.js";

const REPO_PASSWORD = "copy-source-Canary-pw";
const MIRROR_PASSWORD = "copy-mirror-Canary-pw";

const server = useTestServer();

const copyCommand = (ids: string[]): CommandRunCopy => ({
  job_id: nextUlid(),
  kind: "copy",
  requires_admin_creds: false,
  copy: { snapshot_ids: ids },
});

describe.each(RESTIC_VERSIONS)("restic %s", (version) => {
  const restic = resticBinary(version) ?? "";
  const listSnapshots = (repository: string, password: string) =>
    JSON.parse(
      execFileSync(restic, ["--no-cache", "--json", "snapshots"], {
        env: { PATH: process.env.PATH, RESTIC_REPOSITORY: repository, RESTIC_PASSWORD: password },
      }).toString(),
    ) as Array<{ id: string; time: string; original?: string }>;

  it.skipIf(restic === "")(
    `copies every named snapshot to the mirror, creating it first, and reports what it holds${resticNote(version)}`,
    async () => {
      const harness = await startHarness(server(), { resticCommand: restic });
      try {
        const base = await mkdtemp(join(tmpdir(), "fleetback-copy-"));
        const repo = join(base, "repo");
        const mirror = join(base, "mirror");
        const tree = await mkdtemp(join(tmpdir(), "fleetback-src-"));
        await writeFile(join(tree, "a.txt"), "first\n");
        const init = await initRepository(harness, { url: repo, password: REPO_PASSWORD });
        expect(finishedOf(init)).toMatchObject({ status: "succeeded" });
        const backup = async () => {
          const reports = await runJob(harness, backupCommand([tree]));
          expect(finishedOf(reports)).toMatchObject({ status: "succeeded" });
          // 0.14's backup summary names the snapshot by its short id: the newest full id is listed.
          const [newest] = listSnapshots(repo, REPO_PASSWORD).sort(
            (a, b) => Date.parse(b.time) - Date.parse(a.time),
          );
          return { id: String(newest?.id), time: String(newest?.time) };
        };
        const { id: first } = await backup();

        const refused = await runJob(harness, copyCommand([first]));
        expect(finishedOf(refused)).toMatchObject({ status: "failed", error: NO_MIRROR_CREDENTIALS_ERROR });

        harness.peer.send("config.update", {
          slot: "mirror",
          repository: { url: mirror, password: MIRROR_PASSWORD },
        });
        const calls = harness.calls.length;
        const created = await runJob(harness, copyCommand([first]));
        expect(finishedOf(created)).toMatchObject({ status: "succeeded", exit_code: 0 });
        expect(finishedOf(created)?.summary as CopySummary).toMatchObject({
          initialised: true,
          requested: 1,
          mirrored: 1,
          missing: [],
          mirror_snapshot_count: 1,
        });
        const ran = harness.calls.slice(calls);
        expect(
          ran.map((call) => call.args.filter((arg) => !arg.startsWith("/") && arg !== "--cache-dir")),
        ).toEqual([
          ["cat", "config"],
          ["init", "--copy-chunker-params"],
          ["copy", first],
          ["--json", "snapshots"],
        ]);
        const copyCall = ran.find((call) => call.args.includes("copy"));
        expect(copyCall?.env).toMatchObject({
          RESTIC_REPOSITORY: mirror,
          RESTIC_PASSWORD: MIRROR_PASSWORD,
          RESTIC_FROM_REPOSITORY: repo,
          RESTIC_FROM_PASSWORD: REPO_PASSWORD,
        });
        expect(JSON.stringify(ran.map((call) => call.args))).not.toMatch(/Canary/);

        await writeFile(join(tree, "b.txt"), "second\n");
        const { id: second, time: secondTime } = await backup();
        const again = await runJob(harness, copyCommand([second, first]));
        const summary = finishedOf(again)?.summary as CopySummary;
        expect(summary).toMatchObject({
          initialised: false,
          requested: 2,
          mirrored: 2,
          mirror_snapshot_count: 2,
        });
        // A copy keeps its original's time: the newest source snapshot's, in UTC.
        expect(summary.mirror_latest_time).toBe(new Date(Date.parse(secondTime)).toISOString());

        // Nothing new: restic skips both (0.14 says so, 0.18 silently) and the mirror still holds them.
        const idle = await runJob(harness, copyCommand([first, second]));
        expect(finishedOf(idle)).toMatchObject({
          status: "succeeded",
          summary: { initialised: false, requested: 2, mirrored: 2, missing: [], mirror_snapshot_count: 2 },
        });

        const listed = listSnapshots(mirror, MIRROR_PASSWORD);
        expect(listed.map((snapshot) => snapshot.original).sort()).toEqual([first, second].sort());
        // The mirror's upkeep with the host's policy: it forgets there and reports nothing as the
        // host's repository (the host's list still has both snapshots).
        const reportsBefore = harness.peer.received.filter((m) => m.type === "snapshots.report").length;
        const forget = await runJob(harness, {
          job_id: nextUlid(),
          kind: "forget",
          requires_admin_creds: false,
          on_mirror: true,
          forget_groups: [{ tag: "docs", keep: { last: 1 } }],
        });
        expect(finishedOf(forget)).toMatchObject({ status: "succeeded" });
        expect(harness.peer.received.filter((m) => m.type === "snapshots.report").length).toBe(reportsBefore);
        expect(listSnapshots(mirror, MIRROR_PASSWORD).map((snapshot) => snapshot.original)).toEqual([second]);
        expect(listSnapshots(repo, REPO_PASSWORD)).toHaveLength(2);
        const refusedKind = await runJob(harness, {
          job_id: nextUlid(),
          kind: "unlock",
          requires_admin_creds: true,
          on_mirror: true,
        });
        expect(finishedOf(refusedKind)?.error).toMatch(/^unlock does not run on the mirror/);
        const lines = [
          ...logLines(created),
          ...logLines(again),
          ...logLines(refused),
          ...logLines(forget),
          ...logLines(idle),
        ].join("\n");
        expect(lines).toContain("copying 2 snapshots to the mirror");
        expect(lines).not.toMatch(/Canary|chunker_polynomial/);
      } finally {
        await harness.stop();
      }
    },
    180_000,
  );

  it.skipIf(restic === "")(
    `a mirror that cannot be reached fails the copy and is never taken for a missing one${resticNote(version)}`,
    async () => {
      const harness = await startHarness(server(), {
        resticCommand: restic,
        // The agent's unreachable setting bounds the wait for the mirror too.
        repositoryUnreachableAfterMs: 5_000,
      });
      try {
        const repo = join(await mkdtemp(join(tmpdir(), "fleetback-copy-")), "repo");
        const init = await initRepository(harness, { url: repo, password: REPO_PASSWORD });
        expect(finishedOf(init)).toMatchObject({ status: "succeeded" });
        // Port 1 on loopback: nothing listens, so every connection is refused.
        harness.peer.send("config.update", {
          slot: "mirror",
          repository: { url: "rest:http://127.0.0.1:1/mirror/", username: "m", password: MIRROR_PASSWORD },
        });
        const calls = harness.calls.length;
        const down = finishedOf(await runJob(harness, copyCommand(["a".repeat(64)])));
        // 0.14 gives up at once; 0.18 keeps retrying until the probe's time is up.
        expect(down?.status).toBe("failed");
        expect(down?.error).toMatch(
          version === "0.14"
            ? /^the mirror cannot be opened: .*connection refused/
            : /^the mirror did not answer within 5 s$/,
        );
        expect(down?.error).not.toMatch(/Canary/);
        expect(harness.calls.slice(calls).some((call) => call.args.includes("init"))).toBe(false);
      } finally {
        await harness.stop();
      }
    },
    60_000,
  );
});
