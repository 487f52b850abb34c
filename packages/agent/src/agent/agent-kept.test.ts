/**
 * Issue 33, the keeper: a real agent runs forget and prune on another host's repository with the
 * credentials pushed for that one job (protocol 12), against real restic 0.18 and 0.14 and two
 * rest-servers on one data directory: `--append-only` (what the agent's own slots hold, as a
 * protected host's would) and a full one (the maintenance credential). A kept job never falls back
 * to the agent's own slots, never reports the repository as the agent's own, and its credentials
 * are gone once it ended.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CommandRun, CommandRunForget, CommandRunPrune, Repository } from "@fleetback/protocol";
import { describe, expect, it } from "vitest";
import { NO_JOB_CREDENTIALS_ERROR } from "../jobs/kept-job.js";
import { finishedOf, type Harness, nextUlid, runJob, startHarness } from "../testing/agent-harness.js";
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

const USER = "vm";
const PASSWORD = "kept-repository-pw";
const JOB_TIMEOUT_MS = 240_000;
const TEST_TIMEOUT_MS = 900_000;

const server = useTestServer();

/** A kept forget of `ids`, or a kept prune: the keeper's jobs for another host. */
const keptForget = (ids: string[]): CommandRunForget => ({
  job_id: nextUlid(),
  kind: "forget",
  requires_admin_creds: true,
  kept: true,
  forget_groups: [],
  snapshot_ids: ids,
});
const keptPrune = (): CommandRunPrune => ({
  job_id: nextUlid(),
  kind: "prune",
  requires_admin_creds: true,
  kept: true,
});

/** Runs `job` with `repository` pushed to the admin slot for that job alone (protocol 12). */
function runWithJobCredentials(harness: Harness, repository: Repository, job: CommandRun) {
  harness.peer.send("config.update", { slot: "admin", repository, job_id: job.job_id });
  return runJob(harness, job);
}

function repositoryReports(harness: Harness): number {
  return harness.peer.received.filter(
    (message) => message.type === "snapshots.report" || message.type === "repo.stats",
  ).length;
}

describe.each(RESTIC_VERSIONS)("restic %s", (version) => {
  const restic = resticBinary(version) ?? "";

  it.skipIf(restic === "" || !hasRestServer())(
    `a kept forget and prune run with the job's own credentials, never the agent's${resticNote(version)}${restServerNote()}`,
    async () => {
      const cacheDir = await mkdtemp(join(tmpdir(), "fleetback-cache-"));
      const full = await startRestServer(USER, PASSWORD);
      const appendOnly = await startRestServer(USER, PASSWORD, { appendOnly: true, dir: full.dir });
      const harness = await startHarness(server(), { resticCommand: restic, reportWaitMs: JOB_TIMEOUT_MS });
      try {
        const maintenance = resticOn(restic, full, { user: USER, password: PASSWORD, cacheDir });
        await fillRepository(maintenance);
        const before = await listedSnapshotIds(maintenance);
        const [first] = before;
        // The agent's own slots hold only what a protected host holds: the append-only endpoint.
        const own = { url: appendOnly.url, username: USER, password: PASSWORD };
        harness.peer.send("config.update", { slot: "repo", repository: own });
        harness.peer.send("config.update", { slot: "admin", repository: own });
        const kept = { url: full.url, username: USER, password: PASSWORD };
        const reportsBefore = repositoryReports(harness);

        // Without its own credentials a kept job does not run, whatever the agent's slots hold.
        const bare = await runJob(harness, keptForget([first ?? ""]));
        expect(finishedOf(bare)).toMatchObject({ status: "failed", error: NO_JOB_CREDENTIALS_ERROR });

        const forget = keptForget([first ?? ""]);
        const forgotten = await runWithJobCredentials(harness, kept, forget);
        expect(finishedOf(forgotten)).toMatchObject({ status: "succeeded" });
        expect(await listedSnapshotIds(maintenance)).toEqual(before.slice(1));

        // The credentials went with the job.
        const forgetCommand = { ...keptPrune(), job_id: forget.job_id };
        expect(harness.agent.credentials.forCommand(forgetCommand).repository("admin")).toBeUndefined();

        const pruned = await runWithJobCredentials(harness, kept, keptPrune());
        expect(finishedOf(pruned)).toMatchObject({ status: "succeeded" });
        await maintenance("check");

        // A host that became protected forgets its delete authority (frames are read in order).
        harness.peer.send("config.update", { slot: "admin", clear: true });
        // A kind a keeper never runs for another host is refused before anything reads a slot.
        const init = await runJob(harness, {
          job_id: nextUlid(),
          kind: "init",
          requires_admin_creds: false,
          kept: true,
        });
        expect(finishedOf(init)?.status).toBe("failed");
        expect(finishedOf(init)?.error).toContain("init does not run for another host");
        expect(harness.agent.credentials.repository("admin")).toBeUndefined();
        expect(harness.agent.credentials.repository("repo")).toEqual(own);

        // Nothing about the kept repository was reported as the agent's own.
        expect(repositoryReports(harness)).toBe(reportsBefore);
        expect(await listedSnapshotIds(maintenance)).toEqual(before.slice(1));
      } finally {
        await harness.stop();
        await appendOnly.stop();
        await full.stop();
      }
    },
    TEST_TIMEOUT_MS,
  );
});
