/**
 * Backups through a real agent on a real socket: real restic 0.18 and 0.14 against a local
 * repository in a temp dir (init, backup, snapshots.report), and a cancel that must leave no
 * process behind (a stand-in restic that sleeps).
 */
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  backupCommand,
  cancelOnSleepingRestic,
  finishedOf,
  initTempRepository,
  logLines,
  runJob,
  startHarness,
} from "../testing/agent-harness.js";
import { useTestServer } from "../testing/test-server.js";
import { RESTIC_VERSIONS, resticBinary, resticNote } from "../testing/tools.js";

const server = useTestServer();

async function sourceTree(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "fleetback-src-"));
  await mkdir(join(root, "sub"));
  await writeFile(join(root, "a.txt"), "hello fleetback\n");
  await writeFile(join(root, "sub", "b.bin"), Buffer.alloc(4096, 7));
  await writeFile(join(root, "skip.log"), "excluded\n");
  return root;
}

describe.each(RESTIC_VERSIONS)("restic %s", (version) => {
  const restic = resticBinary(version) ?? "";

  it.skipIf(restic === "")(
    `backs up a temp tree and reports the snapshot list${resticNote(version)}`,
    async () => {
      const harness = await startHarness(server(), { resticCommand: restic });
      try {
        await initTempRepository(harness, "backup-test-pw");
        // The init lists the new repository (issue 31: an adopted one shows its snapshots).
        expect((await harness.peer.next("snapshots.report")).payload.snapshots).toEqual([]);

        const tree = await sourceTree();
        const job = backupCommand([tree], { excludes: ["*.log"] });
        const reports = await runJob(harness, job);
        const finished = finishedOf(reports);
        expect(finished).toMatchObject({ job_id: job.job_id, status: "succeeded", exit_code: 0 });
        expect(finished?.error).toBeUndefined();
        const snapshotId = finished?.summary?.snapshot_id;
        expect(typeof snapshotId).toBe("string");
        expect(finished?.summary).toMatchObject({ files_new: 2, total_files_processed: 2 });

        const report = (await harness.peer.next("snapshots.report")).payload;
        expect(report.snapshots).toHaveLength(1);
        const [snapshot] = report.snapshots;
        expect(snapshot?.id.startsWith(String(snapshotId))).toBe(true);
        expect(snapshot).toMatchObject({ paths: [tree], tags: ["docs"], hostname: expect.any(String) });
        expect(snapshot?.time).toMatch(/Z$/);
        if (version === "0.18") {
          expect(snapshot?.size_bytes).toBeGreaterThan(0);
          expect(snapshot?.file_count).toBe(2);
        } else {
          expect(snapshot?.size_bytes).toBe(0);
          expect(snapshot?.file_count).toBe(0);
        }
        // job.finished precedes the snapshot list (protocol 10) and the raw-data stats (protocol
        // 9): the job's time is restic's. No raw status line reached the log.
        const stats = (await harness.peer.next("repo.stats")).payload;
        expect(stats.raw_size_bytes).toBeGreaterThan(0);
        const order = harness.peer.received.map((message) => message.type);
        expect(order.lastIndexOf("job.finished")).toBeLessThan(order.lastIndexOf("snapshots.report"));
        expect(order.lastIndexOf("snapshots.report")).toBeLessThan(order.lastIndexOf("repo.stats"));
        expect(logLines(reports).some((line) => line.includes('"message_type":"status"'))).toBe(false);
        const backupCall = harness.calls.find((call) => call.args.includes("backup"));
        expect(backupCall?.args.slice(-2)).toEqual(["--", tree]);
      } finally {
        await harness.stop();
      }
    },
  );
});

describe("backup cancel", () => {
  it("kills restic's whole process group and reports cancelled; the post-hook still runs", async () => {
    const { reports, received } = await cancelOnSleepingRestic(
      server(),
      "repo",
      backupCommand(["/srv"], { post_hook: 'echo "post saw $FLEETBACK_JOB_STATUS"' }),
    );
    expect(logLines(reports)).toContain("agent: post-hook: post saw cancelled");
    expect(received.some((message) => message.type === "snapshots.report")).toBe(false);
  });
});
