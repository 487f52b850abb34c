/**
 * Issue 31, "a restore reports success and restores nothing": real restic 0.18 and 0.14 behind a
 * real agent, against rest-server with the user `adopt`, whose name is part of a backed-up folder.
 * The folder is browsed (tree.list) and restored as the browser would, and a restore whose include
 * matches nothing in the snapshot must fail and say so.
 */
import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  backupCommand,
  finishedOf,
  initRepository,
  logLines,
  restoreCommand,
  runJob,
  startHarness,
  treeList,
} from "../testing/agent-harness.js";
import { hasRestServer, restServerNote, startRestServer } from "../testing/rest-server.js";
import { useTestServer } from "../testing/test-server.js";
import { RESTIC_VERSIONS, resticBinary, resticNote } from "../testing/tools.js";

const USER = "adopt";
const PASSWORD = "restore-matches-pw";
/** A hang guard far above the run time on a loaded machine, not a budget (runJob's is the same). */
const JOB_TIMEOUT_MS = 120_000;

const server = useTestServer();

describe.each(RESTIC_VERSIONS)("restic %s", (version) => {
  const restic = resticBinary(version) ?? "";

  it.skipIf(restic === "" || !hasRestServer())(
    `a browsed path with the rest-server user's name restores its files; an include that matches nothing fails${resticNote(version)}${restServerNote()}`,
    async () => {
      const rest = await startRestServer(USER, PASSWORD);
      const home = await mkdtemp(join(tmpdir(), "fleetback-home-"));
      const harness = await startHarness(server(), {
        resticCommand: restic,
        parentEnv: { ...process.env, HOME: home },
      });
      try {
        const repository = { url: rest.url, username: USER, password: PASSWORD };
        expect(finishedOf(await initRepository(harness, repository))).toMatchObject({ status: "succeeded" });
        const tree = await mkdtemp(join(tmpdir(), "fleetback-src-"));
        const folder = join(tree, `${USER}-alpha`);
        await mkdir(join(folder, "sub"), { recursive: true });
        await writeFile(join(folder, "notes.txt"), "alpha notes\n");
        await writeFile(join(folder, "sub", "deep.txt"), "deep\n");
        const backup = await runJob(harness, backupCommand([tree], { tag: "matches" }));
        const snapshot = String(finishedOf(backup)?.summary?.snapshot_id);
        expect(finishedOf(backup)).toMatchObject({ status: "succeeded" });

        // The browser lists the folder under its real name, and restoring what it lists works.
        const listed = await treeList(harness, snapshot, tree, JOB_TIMEOUT_MS);
        expect(listed.entries?.map((entry) => entry.path)).toEqual([folder]);
        const browsed = listed.entries?.[0]?.path ?? "";
        const command = restoreCommand(snapshot, [browsed]);
        const restored = await runJob(harness, command);
        expect(finishedOf(restored)).toMatchObject({ status: "succeeded", exit_code: 0 });
        const target = join(home, "fleetback-restore", command.job_id);
        expect(await readFile(join(target, folder, "notes.txt"), "utf8")).toBe("alpha notes\n");
        expect(await readFile(join(target, folder, "sub", "deep.txt"), "utf8")).toBe("deep\n");
        if (version === "0.18") {
          expect(logLines(restored).some((line) => line.includes(`${folder}/notes.txt`))).toBe(true);
        }

        // An include that matches nothing: restic exits 0 having written nothing; the job fails.
        const missing = join(tree, "not-in-the-snapshot");
        const nothing = await runJob(harness, restoreCommand(snapshot, [missing]));
        const sentence = `nothing in snapshot ${snapshot} matches ${missing}: no file was restored`;
        expect(finishedOf(nothing)).toMatchObject({ status: "failed", exit_code: 0, error: sentence });
        expect(logLines(nothing)).toContain(`agent: ${sentence}`);
      } finally {
        await harness.stop();
        await rest.stop();
      }
    },
    240_000,
  );
});
