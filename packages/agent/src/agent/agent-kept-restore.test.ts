/**
 * Issue 38, restore onto another host: a real agent restores a snapshot of another host's
 * repository (protocol 14, a `kept` restore) with the `repo` credential pushed for that one job,
 * against real restic 0.18 and 0.14 and local repositories. It never reads its own repository
 * for it, reports nothing about the other one as its own, and keeps nothing of the credential:
 * not in memory once the job ended, not in its state directory.
 */
import { execFile } from "node:child_process";
import { chmod, mkdtemp, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { CommandRun } from "@fleetback/protocol";
import { describe, expect, it } from "vitest";
import { NO_JOB_CREDENTIALS_ERROR } from "../jobs/kept-job.js";
import { finishedOf, nextUlid, runJob, startHarness } from "../testing/agent-harness.js";
import { useTestServer } from "../testing/test-server.js";
import { RESTIC_VERSIONS, resticBinary, resticNote } from "../testing/tools.js";

const OTHER_PASSWORD = "other-host-canary-pw-5f1c";
const OWN_PASSWORD = "own-repository-pw";
const TEST_TIMEOUT_MS = 300_000;
const run = promisify(execFile);

const server = useTestServer();

async function resticIn(restic: string, repository: string, password: string, ...args: string[]) {
  const { stdout } = await run(restic, args, {
    env: {
      PATH: process.env.PATH,
      RESTIC_REPOSITORY: repository,
      RESTIC_PASSWORD: password,
      RESTIC_CACHE_DIR: join(repository, "..", "cache"),
    },
  });
  return stdout;
}

/** Every file below `dir` whose bytes hold `needle`. */
async function filesHolding(dir: string, needle: string): Promise<string[]> {
  const hits: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) {
      const path = join(entry.parentPath, entry.name);
      if ((await readFile(path)).includes(needle)) {
        hits.push(path);
      }
    }
  }
  return hits;
}

function keptRestore(jobId: string, snapshotId: string, path: string, targetDir: string): CommandRun {
  return {
    job_id: jobId,
    kind: "restore",
    requires_admin_creds: false,
    kept: true,
    restore: { snapshot_id: snapshotId, paths: [path], in_place: false, target_dir: targetDir },
  };
}

describe.each(RESTIC_VERSIONS)("restic %s", (version) => {
  const restic = resticBinary(version) ?? "";

  it.skipIf(restic === "")(
    `a kept restore reads the other host's repository with the job's repo credential alone${resticNote(version)}`,
    async () => {
      const work = await mkdtemp(join(tmpdir(), "fleetback-kept-restore-"));
      const other = join(work, "other-repo");
      const own = join(work, "own-repo");
      const source = join(work, "source");
      await resticIn(restic, other, OTHER_PASSWORD, "init");
      await resticIn(restic, own, OWN_PASSWORD, "init");
      await run("mkdir", ["-p", source]);
      const file = join(source, "report.bin");
      await writeFile(file, Buffer.from(Array.from({ length: 50_000 }, (_, i) => (i * 7) % 256)));
      await chmod(file, 0o640);
      await resticIn(restic, other, OTHER_PASSWORD, "backup", source);
      const listed = JSON.parse(await resticIn(restic, other, OTHER_PASSWORD, "snapshots", "--json")) as {
        id: string;
      }[];
      const snapshotId = listed[0]?.id ?? "";

      const harness = await startHarness(server(), { resticCommand: restic });
      try {
        harness.peer.send("config.update", {
          slot: "repo",
          repository: { url: own, password: OWN_PASSWORD },
        });
        const reportsBefore = harness.peer.received.filter(
          (message) => message.type === "snapshots.report" || message.type === "repo.stats",
        ).length;

        // Without the job's own credential it does not fall back to the agent's repository.
        const bare = await runJob(harness, keptRestore(nextUlid(), snapshotId, source, join(work, "bare")));
        expect(finishedOf(bare)).toMatchObject({ status: "failed", error: NO_JOB_CREDENTIALS_ERROR });

        // An admin set is not what a restore reads with: only the repo set is.
        const adminOnly = nextUlid();
        harness.peer.send("config.update", {
          slot: "admin",
          repository: { url: other, password: OTHER_PASSWORD },
          job_id: adminOnly,
        });
        const refused = await runJob(
          harness,
          keptRestore(adminOnly, snapshotId, source, join(work, "admin")),
        );
        expect(finishedOf(refused)).toMatchObject({ status: "failed", error: NO_JOB_CREDENTIALS_ERROR });

        const jobId = nextUlid();
        const target = join(work, "target");
        harness.peer.send("config.update", {
          slot: "repo",
          repository: { url: other, password: OTHER_PASSWORD },
          job_id: jobId,
        });
        const restored = await runJob(harness, keptRestore(jobId, snapshotId, source, target));
        expect(finishedOf(restored)?.status).toBe("succeeded");
        const copy = join(target, file);
        expect(await readFile(copy)).toEqual(await readFile(file));
        expect((await stat(copy)).mode & 0o7777).toBe(0o640);

        // The credential went with the job, and nothing of it or the other repository stayed.
        const command = keptRestore(jobId, snapshotId, source, target);
        expect(harness.agent.credentials.forCommand(command).repository("repo")).toBeUndefined();
        expect(harness.agent.credentials.repository("repo")?.url).toBe(own);
        expect(
          harness.peer.received.filter(
            (message) => message.type === "snapshots.report" || message.type === "repo.stats",
          ).length,
        ).toBe(reportsBefore);
        expect(await filesHolding(harness.stateDir, OTHER_PASSWORD)).toEqual([]);
      } finally {
        await harness.stop();
      }
    },
    TEST_TIMEOUT_MS,
  );
});
