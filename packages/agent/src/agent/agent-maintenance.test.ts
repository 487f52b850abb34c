/**
 * Repository maintenance through a real agent on a real socket, with real restic 0.18 and 0.14
 * against a local repository in a temp dir: forget restricted to one tag, prune with the admin
 * slot, check (clean, damaged, unreadable), unlock, and the repo.stats each sends; plus a cancel
 * that must leave no process behind (a stand-in restic that sleeps).
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type {
  CommandRunForget,
  CommandRunPrune,
  CommandRunUnlock,
  ForgetGroup,
  RepoStats,
} from "@fleetback/protocol";
import { describe, expect, it } from "vitest";
import {
  backupCommand,
  cancelOnSleepingRestic,
  checkCommand,
  finishedOf,
  type Harness,
  initTempRepository,
  latestSnapshots,
  logLines,
  nextUlid,
  runJob,
  startHarness,
} from "../testing/agent-harness.js";
import { waitUntil } from "../testing/processes.js";
import { useTestServer } from "../testing/test-server.js";
import { RESTIC_VERSIONS, resticBinary, resticNote } from "../testing/tools.js";

const PASSWORD = "maintenance-test-pw";

const server = useTestServer();

const common = () => ({ job_id: nextUlid(), requires_admin_creds: false });

const forgetCommand = (forget_groups: ForgetGroup[]): CommandRunForget => ({
  ...common(),
  kind: "forget",
  forget_groups,
});
const pruneCommand = (): CommandRunPrune => ({ ...common(), kind: "prune", requires_admin_creds: true });
const unlockCommand = (): CommandRunUnlock => ({ ...common(), kind: "unlock", requires_admin_creds: true });

function statsSince(harness: Harness, count: number): RepoStats[] {
  return harness.peer.received
    .flatMap((message) => (message.type === "repo.stats" ? [message.payload] : []))
    .slice(count);
}

function statsCount(harness: Harness): number {
  return harness.peer.received.filter((message) => message.type === "repo.stats").length;
}

/**
 * The pack that holds only file data. Removing a tree pack instead makes restic retry loading the
 * tree for ~95 s before it reports the damage (its backend's backoff), and which pack sorts first
 * is chance: that test once took 98 s of its 120.
 */
async function dataOnlyPack(restic: string, repo: string): Promise<string> {
  const run = async (...args: string[]) =>
    (
      await promisify(execFile)(restic, ["--no-cache", "--no-lock", ...args], {
        env: { PATH: process.env.PATH ?? "", RESTIC_REPOSITORY: repo, RESTIC_PASSWORD: PASSWORD },
      })
    ).stdout;
  for (const index of (await run("list", "index")).trim().split("\n")) {
    const { packs } = JSON.parse(await run("cat", "index", index)) as {
      packs: Array<{ id: string; blobs: Array<{ type: string }> }>;
    };
    const pack = packs.find((candidate) => candidate.blobs.every((blob) => blob.type === "data"));
    if (pack) {
      return join(repo, "data", pack.id.slice(0, 2), pack.id);
    }
  }
  throw new Error("no data-only pack in the repository");
}

describe.each(RESTIC_VERSIONS)("restic %s", (version) => {
  const restic = resticBinary(version) ?? "";

  async function setUp(): Promise<{ harness: Harness; repo: string; tree: string }> {
    const harness = await startHarness(server(), { resticCommand: restic });
    const repo = await initTempRepository(harness, PASSWORD);
    const tree = await mkdtemp(join(tmpdir(), "fleetback-src-"));
    // The admin slot of a local repository: the same location and key, delete authority implied.
    harness.peer.send("config.update", { slot: "admin", repository: { url: repo, password: PASSWORD } });
    return { harness, repo, tree };
  }

  async function backup(harness: Harness, tree: string, tag: string, content: string): Promise<string> {
    await writeFile(join(tree, "file.txt"), content);
    const statsBefore = statsCount(harness);
    const reports = await runJob(harness, backupCommand([tree], { tag }));
    const finished = finishedOf(reports);
    expect(finished).toMatchObject({ status: "succeeded" });
    // The backup's stats follow its job.finished (protocol 9); the counts below start after them.
    await waitUntil(() => statsCount(harness) > statsBefore, 60_000);
    return String(finished?.summary?.snapshot_id);
  }

  it.skipIf(restic === "")(
    `forget keeps the newest of tag A and leaves tag B alone; prune, check and unlock succeed${resticNote(version)}`,
    async () => {
      const { harness, tree } = await setUp();
      try {
        const a1 = await backup(harness, tree, "A", "a one\n");
        const a2 = await backup(harness, tree, "A", "a two\n");
        const a3 = await backup(harness, tree, "A", "a three\n");
        const b1 = await backup(harness, tree, "B", "b one\n");
        const b2 = await backup(harness, tree, "B", "b two\n");
        // Backup also reports raw-data stats after success.
        expect(statsSince(harness, 0).at(-1)).toMatchObject({ snapshot_count: 5 });

        let before = statsCount(harness);
        const forget = await runJob(harness, forgetCommand([{ tag: "A", keep: { last: 1 } }]));
        expect(finishedOf(forget)).toMatchObject({
          status: "succeeded",
          exit_code: 0,
          summary: { snapshots_removed: 2, snapshots_kept: 1 },
        });
        expect(
          logLines(forget).some((line) => /^agent: forget tag A: removed 2 snapshots \(/.test(line)),
        ).toBe(true);
        const forgetCall = harness.calls.find((call) => call.args.includes("forget"));
        expect(forgetCall?.args.slice(forgetCall.args.indexOf("forget"))).toEqual([
          "forget",
          "--tag",
          "A",
          "--group-by",
          "host,tags",
          "--keep-last",
          "1",
        ]);
        expect(harness.calls.some((call) => call.args.includes("--prune"))).toBe(false);
        const listed = latestSnapshots(harness);
        const prefix = (id: string) => id.slice(0, 8);
        const byTag = (tag: string) => listed.filter((snapshot) => snapshot.tags.includes(tag));
        expect(byTag("A").map((snapshot) => snapshot.short_id)).toEqual([prefix(a3)]);
        expect(
          byTag("B")
            .map((snapshot) => snapshot.short_id)
            .sort(),
        ).toEqual([prefix(b1), prefix(b2)].sort());
        expect(listed.some((snapshot) => [a1, a2].map(prefix).includes(snapshot.short_id))).toBe(false);
        const [forgetStats] = statsSince(harness, before);
        expect(forgetStats).toEqual({ last_forget_at: expect.any(String), snapshot_count: 3 });

        before = statsCount(harness);
        const prune = await runJob(harness, pruneCommand());
        expect(finishedOf(prune)).toMatchObject({ status: "succeeded", exit_code: 0 });
        expect(logLines(prune)).toContain("stdout: done");
        const [pruneStats] = statsSince(harness, before);
        expect(pruneStats).toMatchObject({
          last_prune_at: expect.any(String),
          raw_size_bytes: expect.any(Number),
          snapshot_count: 3,
        });
        expect(pruneStats?.raw_size_bytes).toBeGreaterThan(0);
        if (version === "0.18") {
          expect(pruneStats?.total_size_bytes).toBeGreaterThan(0);
          expect(pruneStats?.compression_ratio).toBeGreaterThan(0);
        } else {
          expect(pruneStats).not.toHaveProperty("total_size_bytes");
          expect(pruneStats).not.toHaveProperty("compression_ratio");
        }
        expect(pruneStats).not.toHaveProperty("total_file_count");

        before = statsCount(harness);
        const check = await runJob(harness, checkCommand({ read_data_subset: "100%" }));
        expect(finishedOf(check)).toMatchObject({ status: "succeeded", exit_code: 0 });
        expect(logLines(check)).toContain("stdout: no errors were found");
        expect(statsSince(harness, before)).toEqual([
          { last_check_status: "ok", last_check_at: expect.any(String) },
        ]);

        const unlock = await runJob(harness, unlockCommand());
        expect(finishedOf(unlock)).toMatchObject({ status: "succeeded", exit_code: 0 });
      } finally {
        await harness.stop();
      }
    },
    180_000,
  );

  it.skipIf(restic === "")(
    `check reports errors for a damaged repository and failed for an unreadable one${resticNote(version)}`,
    async () => {
      const { harness, repo, tree } = await setUp();
      try {
        await backup(harness, tree, "A", "soon damaged\n");
        await rm(await dataOnlyPack(restic, repo));

        let before = statsCount(harness);
        const damaged = await runJob(harness, checkCommand());
        expect(finishedOf(damaged)).toMatchObject({
          status: "failed",
          exit_code: 1,
          error: "the repository contains errors",
        });
        expect(logLines(damaged)).toContain("stderr: Fatal: repository contains errors");
        expect(statsSince(harness, before)).toEqual([
          { last_check_status: "errors", last_check_at: expect.any(String) },
        ]);

        await rm(join(repo, "config"));
        before = statsCount(harness);
        const unreadable = await runJob(harness, checkCommand());
        expect(finishedOf(unreadable)).toMatchObject({
          status: "failed",
          exit_code: version === "0.18" ? 10 : 1,
          error: expect.stringMatching(/^Fatal: /),
        });
        expect(statsSince(harness, before)).toEqual([
          { last_check_status: "failed", last_check_at: expect.any(String) },
        ]);
      } finally {
        await harness.stop();
      }
    },
    120_000,
  );
});

describe("maintenance cancel", () => {
  it("a cancelled prune kills restic's whole process group and reports no stats", async () => {
    const { received } = await cancelOnSleepingRestic(server(), "admin", pruneCommand());
    expect(received.some((message) => message.type === "repo.stats")).toBe(false);
  });
});
