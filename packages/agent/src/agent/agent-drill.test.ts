/**
 * Restore drills through a real agent on a real socket with real restic 0.18 and 0.14 against a
 * local repository: a drill of an intact snapshot restores and verifies a sample and passes; after
 * bytes in the middle of a data pack are overwritten, the drill fails with restic's error and the
 * scratch directory under the state dir is gone either way.
 */
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, open, readdir, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CommandRunDrill, DrillSummary } from "@fleetback/protocol";
import { describe, expect, it } from "vitest";
import { DRILL_DIR_NAME } from "../jobs/drill-job.js";
import {
  backupCommand,
  finishedOf,
  initTempRepository,
  logLines,
  nextUlid,
  runJob,
  startHarness,
} from "../testing/agent-harness.js";
import { useTestServer } from "../testing/test-server.js";
import { RESTIC_VERSIONS, resticBinary, resticNote } from "../testing/tools.js";

const PASSWORD = "drill-test-pw";
/** Incompressible, so each file's blobs are as large on disk as in the tree. */
const FILES = { "a.bin": 300_000, "b.bin": 200_000, "docs/c.txt": 0, "docs/d [1].bin": 150_000 };

const server = useTestServer();

function drillCommand(snapshotId: string, sampleFiles: number): CommandRunDrill {
  return {
    job_id: nextUlid(),
    kind: "drill",
    requires_admin_creds: false,
    drill: { snapshot_id: snapshotId, sample_files: sampleFiles },
  };
}

/** The largest pack under data/: a data pack (tree packs hold only small directory blobs). */
async function largestPack(repo: string): Promise<string> {
  const entries = await readdir(join(repo, "data"), { recursive: true, withFileTypes: true });
  const packs = await Promise.all(
    entries
      .filter((entry) => entry.isFile())
      .map(async (entry) => {
        const path = join(entry.parentPath, entry.name);
        return { path, size: (await stat(path)).size };
      }),
  );
  const [largest] = packs.sort((a, b) => b.size - a.size);
  if (largest === undefined) {
    throw new Error("the repository has no pack");
  }
  return largest.path;
}

async function overwriteMiddle(path: string): Promise<void> {
  const { size } = await stat(path);
  const file = await open(path, "r+");
  try {
    await file.write(Buffer.alloc(4096, 0x5a), 0, 4096, Math.floor(size / 2) - 2048);
  } finally {
    await file.close();
  }
}

describe.each(RESTIC_VERSIONS)("restic %s", (version) => {
  const restic = resticBinary(version) ?? "";

  it.skipIf(restic === "")(
    `a drill passes on an intact repository and fails after a pack is damaged, leaving no scratch copy${resticNote(version)}`,
    async () => {
      const harness = await startHarness(server(), { resticCommand: restic });
      try {
        const repo = await initTempRepository(harness, PASSWORD);
        const tree = await mkdtemp(join(tmpdir(), "fleetback-src-"));
        await mkdir(join(tree, "docs"));
        for (const [name, size] of Object.entries(FILES)) {
          await writeFile(join(tree, name), randomBytes(size));
        }
        const backup = finishedOf(await runJob(harness, backupCommand([tree], { tag: "drill" })));
        expect(backup).toMatchObject({ status: "succeeded" });
        const snapshotId = String(backup?.summary?.snapshot_id);

        const passed = await runJob(harness, drillCommand(snapshotId, 10));
        const total = Object.values(FILES).reduce((sum, size) => sum + size, 0);
        expect(finishedOf(passed)).toMatchObject({ status: "succeeded", exit_code: 0 });
        expect(finishedOf(passed)?.summary as DrillSummary).toEqual({
          snapshot_id: snapshotId,
          files_in_snapshot: 4,
          files_checked: 4,
          bytes_checked: total,
          mismatch_count: 0,
          mismatches: [],
        });
        const restoreCall = harness.calls.find((call) => call.args.includes("restore"));
        expect(restoreCall?.args).toContain("--verify");
        expect(restoreCall?.args).toContain(`${tree}/docs/d \\[1\\].bin`);
        expect(await readdir(join(harness.stateDir, DRILL_DIR_NAME))).toEqual([]);

        await overwriteMiddle(await largestPack(repo));
        const failed = await runJob(harness, drillCommand(snapshotId, 10));
        const finished = finishedOf(failed);
        expect(finished).toMatchObject({
          status: "failed",
          exit_code: 1,
          error: expect.stringMatching(
            /^restic could not restore and verify the sample: Fatal: There were \d+ errors \(first: \/.+: .*ciphertext verification failed\)$/,
          ),
        });
        expect((finished?.summary as DrillSummary | undefined)?.mismatch_count ?? 0).toBeGreaterThan(0);
        expect(logLines(failed).some((line) => line.startsWith("agent: the drill failed: "))).toBe(true);
        expect(await readdir(join(harness.stateDir, DRILL_DIR_NAME))).toEqual([]);
      } finally {
        await harness.stop();
      }
    },
    180_000,
  );
});
