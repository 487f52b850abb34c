/**
 * Issue 31 through a real agent with real restic 0.18 and 0.14: a repository made by hand with the
 * restic CLI, holding snapshots of two other machines (alpha, beta) under the same tag the host
 * uses. Its init (as when credentials are bound) lists them at once; its backups are made under the
 * host name the server sends (`--host`); its policy forget, restricted to the host's names, removes
 * only the host's own snapshots, and restic itself still lists alpha's and beta's afterwards.
 */
import { execFile } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Snapshot } from "@fleetback/protocol";
import { describe, expect, it } from "vitest";
import {
  backupCommand,
  finishedOf,
  type Harness,
  initCommand,
  latestSnapshots,
  nextUlid,
  runJob,
  startHarness,
} from "../testing/agent-harness.js";
import { waitUntil } from "../testing/processes.js";
import { useTestServer } from "../testing/test-server.js";
import { RESTIC_VERSIONS, resticBinary, resticNote } from "../testing/tools.js";

const PASSWORD = "shared-repository-pw";

const server = useTestServer();

function reportsSoFar(harness: Harness): number {
  return harness.peer.received.filter((message) => message.type === "snapshots.report").length;
}

describe.each(RESTIC_VERSIONS)("restic %s", (version) => {
  const restic = resticBinary(version) ?? "";
  const cli = async (repo: string, ...args: string[]) =>
    (
      await promisify(execFile)(restic, ["--no-cache", ...args], {
        env: { PATH: process.env.PATH ?? "", RESTIC_REPOSITORY: repo, RESTIC_PASSWORD: PASSWORD },
      })
    ).stdout;

  it.skipIf(restic === "")(
    `lists an adopted repository at init, backs up under its host name and forgets only its own snapshots${resticNote(version)}`,
    async () => {
      const repo = join(await mkdtemp(join(tmpdir(), "fleetback-shared-")), "repo");
      const tree = await mkdtemp(join(tmpdir(), "fleetback-src-"));
      await writeFile(join(tree, "file.txt"), "other machines\n");
      await cli(repo, "init");
      for (const machine of ["alpha", "alpha", "beta"]) {
        await cli(repo, "backup", "--host", machine, "--tag", "default", tree);
      }

      const harness = await startHarness(server(), { resticCommand: restic });
      harness.peer.send("config.update", { slot: "repo", repository: { url: repo, password: PASSWORD } });
      const before = reportsSoFar(harness);
      expect(finishedOf(await runJob(harness, initCommand()))).toMatchObject({ status: "succeeded" });
      // The init itself reports what the adopted repository holds.
      await waitUntil(() => reportsSoFar(harness) > before, 60_000);
      expect(
        latestSnapshots(harness)
          .map((s) => s.hostname)
          .sort(),
      ).toEqual(["alpha", "alpha", "beta"]);

      for (const content of ["one\n", "two\n"]) {
        await writeFile(join(tree, "file.txt"), content);
        const count = reportsSoFar(harness);
        const backup = await runJob(harness, backupCommand([tree], { tag: "default", host: "web" }));
        expect(finishedOf(backup)).toMatchObject({ status: "succeeded" });
        await waitUntil(() => reportsSoFar(harness) > count, 60_000);
      }
      expect(latestSnapshots(harness).filter((s) => s.hostname === "web")).toHaveLength(2);

      const forget = await runJob(harness, {
        job_id: nextUlid(),
        kind: "forget",
        requires_admin_creds: false,
        forget_groups: [{ tag: "default", keep: { last: 1 } }],
        hosts: ["web", "web.old-name"],
      });
      expect(finishedOf(forget)).toMatchObject({
        status: "succeeded",
        summary: { snapshots_removed: 1, snapshots_kept: 1 },
      });
      const call = harness.calls.find((spec) => spec.args.includes("forget"));
      expect(call?.args).toContain("--host=web");
      expect(call?.args).toContain("--host=web.old-name");
      // restic itself: every other machine's snapshot is still there, and one of the host's.
      const left = JSON.parse(await cli(repo, "snapshots", "--json", "--no-lock")) as Snapshot[];
      expect(left.map((s) => s.hostname).sort()).toEqual(["alpha", "alpha", "beta", "web"]);
      expect(
        latestSnapshots(harness)
          .map((s) => s.hostname)
          .sort(),
      ).toEqual(["alpha", "alpha", "beta", "web"]);
    },
    240_000,
  );
});
