import { createManualTimers, type ManualTimers } from "@fleetback/protocol/manual-timers";
import { describe, expect, it } from "vitest";
import type { ProcessResult, ProcessSpec } from "../restic/runner.js";
import { type BackupRunOptions, runBackup } from "../testing/backup-run.js";
import {
  EXITED_0,
  type FixtureVersion,
  fixture,
  INTERRUPTED,
  JOB_TEST_START,
  recordedLockedError,
} from "../testing/job-run.js";
import { waitUntil } from "../testing/processes.js";
import { RAW_DATA_STATS_ARGS, recordedRepoStats } from "../testing/recorded-stats.js";
import { LISTING_PREEMPT_GRACE_MS } from "./backup-job.js";
import { NextJobWaiting } from "./job-types.js";
import { BACKUP_STATS_TIMEOUT_MS } from "./raw-data-stats.js";

/** The reason the queue stops a job's after-finish work with when another job arrives. */
const nextJobWaiting = () => new NextJobWaiting({ job_id: "01JNEXTJOB0000000000000000", kind: "check" });

const recording = (version: FixtureVersion, name: string) => fixture(version, name);

/** The recorded backup of `version` that succeeds, with the snapshot list recorded after it. */
const recordedBackup = (
  version: FixtureVersion,
  options: Omit<BackupRunOptions, "backup" | "snapshots"> = {},
) =>
  runBackup({
    backup: recording(version, "backup-1"),
    snapshots: recording(version, "snapshots"),
    ...options,
  });

/**
 * A backup on the manual clock whose snapshot listing never answers by itself: `stop` is given
 * the listing and the way to end it. `endsAt(ms)` checks the listing still runs 1 ms before `ms`
 * and has ended at `ms`, with no sleep: the stop must follow the timer within advance itself.
 */
function backupWithHangingListing(
  stop: (listing: ProcessSpec, timers: ManualTimers, end: (result: ProcessResult) => void) => void,
  options: Pick<BackupRunOptions, "abortAfterFinishWith"> = {},
) {
  const timers = createManualTimers(JOB_TEST_START);
  let listing: ProcessSpec | undefined;
  let ended = false;
  const running = runBackup({
    backup: recording("0.18.0", "backup-1"),
    timers,
    snapshotsRun: (spec) => {
      listing = spec;
      return new Promise((resolve) => {
        stop(spec, timers, (result) => {
          ended = true;
          resolve(result);
        });
      });
    },
    ...options,
  });
  return {
    running,
    async endsAt(ms: number): Promise<ProcessSpec | undefined> {
      await waitUntil(() => listing !== undefined);
      timers.advance(ms - 1);
      expect(ended).toBe(false);
      timers.advance(1);
      expect(ended).toBe(true);
      return listing;
    },
  };
}

describe("snapshot listing after a backup", () => {
  it("comes after job.finished (protocol 10) and runs to its end when the next job is waiting", async () => {
    let listingSignal: AbortSignal | undefined;
    const next = nextJobWaiting();
    const ran = await runBackup({
      backup: recording("0.18.0", "backup-1"),
      snapshotsRun: (spec) => {
        listingSignal = spec.signal;
        // Answers on the next turn, after the preemption below has landed.
        return new Promise((resolve) =>
          setTimeout(() => {
            spec.onLine({ stream: "stdout", text: recording("0.18.0", "snapshots").stdout.trim() });
            resolve(EXITED_0);
          }, 10),
        );
      },
      abortAfterFinishWith: next,
    });
    expect(ran.outcome).toMatchObject({ status: "succeeded", exit_code: 0 });
    expect(ran.reportsAtFinish).toBe(0);
    expect(ran.reports).toHaveLength(1);
    expect(listingSignal?.aborted).toBe(false);
    // The stats are skipped without starting restic.
    expect(ran.calls.filter((call) => call.args.includes("stats"))).toEqual([]);
    expect(ran.lines.map((entry) => entry.line)).toContain(
      `repository stats skipped: ${next.message}; the next backup reads them`,
    );
  });

  it("gives the listing 10 s once the next job is waiting, then stops it", async () => {
    // A repository that stopped answering right after the backup: the listing hangs.
    const backup = backupWithHangingListing(
      (spec, _timers, end) => spec.signal?.addEventListener("abort", () => end(INTERRUPTED)),
      { abortAfterFinishWith: nextJobWaiting() },
    );
    await backup.endsAt(LISTING_PREEMPT_GRACE_MS);
    const ran = await backup.running;
    expect(LISTING_PREEMPT_GRACE_MS).toBe(10_000);
    expect(ran.reports).toEqual([]);
    expect(ran.calls.filter((call) => call.args.includes("stats"))).toEqual([]);
  });

  it("stops when the agent shuts down after job.finished", async () => {
    let listed = false;
    const ran = await runBackup({
      backup: recording("0.18.0", "backup-1"),
      snapshotsRun: (spec) =>
        new Promise((resolve) => {
          spec.signal?.addEventListener("abort", () => resolve(INTERRUPTED));
          setTimeout(() => {
            listed = true;
            resolve(EXITED_0);
          }, 5_000);
        }),
      abortAfterFinishWith: new Error("the agent is stopping"),
    });
    expect(listed).toBe(false);
    expect(ran.reports).toEqual([]);
    expect(ran.calls.filter((call) => call.args.includes("stats"))).toEqual([]);
  });

  it("gives restic snapshots 60 s: still listing at 59.999 s, given up at 60 s, and the backup succeeds", async () => {
    // A restic that never answers; the runner ends it at spec.timeoutMs, as the spawn adapter
    // does with a real process (spawn-adapter.test.ts), here on the manual clock.
    const backup = backupWithHangingListing((spec, timers, end) =>
      timers.after(spec.timeoutMs ?? Number.POSITIVE_INFINITY, () =>
        end({ kind: "exited", exitCode: null, signal: "SIGTERM", cancelled: false, timedOut: true }),
      ),
    );
    // The listing after a backup is bounded by 60 s, written out here rather than read from the code.
    const listing = await backup.endsAt(60_000);
    expect(listing?.timeoutMs).toBe(60_000);
    const ran = await backup.running;
    expect(ran.outcome).toMatchObject({ status: "succeeded", exit_code: 0 });
    expect(ran.reports).toEqual([]);
    expect(ran.lines.map((entry) => entry.line)).toContain(
      "listing snapshots failed: restic timed out; the backup itself is not affected",
    );
  });
});

describe("backup repository stats", () => {
  it("after success runs one raw-data stats with a timeout and reports its sizes", async () => {
    const ran = await recordedBackup("0.18.0", { stats: recording("0.18.0", "stats-raw") });
    expect(ran.outcome.status).toBe("succeeded");
    const statsCall = ran.calls.find((call) => call.args.includes("stats"));
    expect(statsCall?.args).toEqual(RAW_DATA_STATS_ARGS);
    expect(statsCall?.timeoutMs).toBe(BACKUP_STATS_TIMEOUT_MS);
    expect(ran.stats).toEqual([recordedRepoStats("0.18.0")]);
  });

  it("a failing stats run is logged and changes neither the outcome nor the snapshot report", async () => {
    const ran = await recordedBackup("0.18.0", { stats: recording("0.18.0", "err-locked-prune") });
    expect(ran.outcome).toMatchObject({ status: "succeeded", exit_code: 0 });
    expect(ran.reports).toHaveLength(1);
    expect(ran.stats).toEqual([]);
    expect(ran.lines.map((entry) => entry.line)).toContain(
      `reading repository stats failed: ${recordedLockedError("0.18.0")}; the backup itself is not affected`,
    );
  });

  it("a stats run stopped because the next job is waiting is skipped, not reported as a failure", async () => {
    const ran = await recordedBackup("0.18.0", {
      statsRun: (spec) =>
        new Promise((resolve) => {
          const stopped = () =>
            resolve({ kind: "exited", exitCode: null, signal: "SIGTERM", cancelled: true, timedOut: false });
          if (spec.signal?.aborted) {
            stopped();
          }
          spec.signal?.addEventListener("abort", stopped);
        }),
      abortAfterFinishWith: nextJobWaiting(),
    });
    expect(ran.outcome).toMatchObject({ status: "succeeded", exit_code: 0 });
    expect(ran.reports).toHaveLength(1);
    expect(ran.stats).toEqual([]);
    const lines = ran.lines.map((entry) => entry.line);
    expect(lines).toContain(
      "repository stats skipped: job 01JNEXTJOB0000000000000000 (check) is waiting to run; the next backup reads them",
    );
    expect(lines.some((line) => line.startsWith("reading repository stats failed"))).toBe(false);
  });

  it("a failed backup runs no stats", async () => {
    const ran = await runBackup({ backup: recording("0.18.0", "err-wrong-password-backup-json") });
    expect(ran.calls.filter((call) => call.args.includes("stats"))).toEqual([]);
    expect(ran.stats).toEqual([]);
  });
});

describe("browse index after a backup", () => {
  it.each(["0.18.0", "0.14.0"] as const)(
    "restic %s: builds the new snapshot's index by its full id, after the list and the stats",
    async (version) => {
      const ran = await recordedBackup(version, { prebuild: true });
      expect(ran.outcome.status).toBe("succeeded");
      const listed: { id: string }[] = JSON.parse(recording(version, "snapshots").stdout);
      const summaryId = String(ran.outcome.summary?.snapshot_id);
      const full = listed.find((snapshot) => snapshot.id.startsWith(summaryId))?.id;
      expect(full).toHaveLength(64);
      expect(ran.prebuilt).toEqual([{ snapshotId: full, aborted: false }]);
      expect(ran.stats).toHaveLength(1);
    },
  );

  it("is skipped when the next job is waiting, when the backup failed, and when the list lacks the snapshot", async () => {
    const preempted = await recordedBackup("0.18.0", {
      abortAfterFinishWith: nextJobWaiting(),
      prebuild: true,
    });
    expect(preempted.reports).toHaveLength(1);
    expect(preempted.prebuilt).toEqual([]);
    const failed = await runBackup({
      backup: recording("0.18.0", "err-wrong-password-backup-json"),
      prebuild: true,
    });
    expect(failed.prebuilt).toEqual([]);
    const unlisted = await runBackup({ backup: recording("0.18.0", "backup-1"), prebuild: true });
    expect(unlisted.prebuilt).toEqual([]);
    expect([...preempted.catalogued, ...failed.catalogued, ...unlisted.catalogued]).toEqual([]);
  });
});

describe("file catalogue after a backup", () => {
  it.each(["0.18.0", "0.14.0"] as const)(
    "restic %s: catches the group up from the listed snapshots, under the new snapshot's hostname",
    async (version) => {
      const ran = await recordedBackup(version, { prebuild: true });
      const [snapshotId] = ran.prebuilt.map((call) => call.snapshotId);
      const listed = ran.reports.flatMap((report) => report.snapshots);
      const made = listed.find((s) => s.id === snapshotId);
      expect(made?.hostname).not.toBe("");
      expect(ran.catalogued).toEqual([
        { repositoryUrl: "/srv/repo", tag: "t1", hostname: made?.hostname, snapshots: listed },
      ]);
    },
  );

  it("is not sent when no index was built", async () => {
    const ran = await recordedBackup("0.18.0", {
      prebuild: true,
      prebuiltDir: () => undefined,
    });
    expect(ran.prebuilt).toHaveLength(1);
    expect(ran.catalogued).toEqual([]);
  });
});
