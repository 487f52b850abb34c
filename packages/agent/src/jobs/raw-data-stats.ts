/**
 * @module jobs/raw-data-stats
 * `restic stats --json --mode raw-data` (testdata/restic `stats-raw`) as a partial `repo.stats`:
 *
 * - `raw_size_bytes`: `total_size`, the bytes the repository stores (after compression).
 * - `total_size_bytes`: `total_uncompressed_size`, the same blobs before compression, and
 *   `compression_ratio`: restic's own `compression_ratio` (uncompressed / stored). Both exist
 *   since 0.15 only; restic 0.14 prints neither, so for 0.14 they are left out rather than guessed.
 * - `snapshot_count`: `snapshots_count`.
 *
 * `total_file_count` is never taken from raw-data mode: 0.14 prints a meaningless 0 there and
 * 0.18 omits it; a real file count needs the restore-size mode, which walks every snapshot's tree.
 * 0.18 omits fields that are 0, so when the version has the compression fields a missing size is 0.
 * A failed, timed-out or unreadable stats run is logged and reports nothing.
 */
import { describeRepoStats, type RepoStats } from "@fleetback/protocol";
import { count, isObject } from "../restic/backup-output.js";
import { isAtLeast } from "../restic/version.js";
import { type JobRun, NextJobWaiting } from "./job-types.js";
import { keepStdout } from "./kept-stdout.js";
import type { RepositoryContext, RepositoryJobDeps } from "./repository-job.js";
import { toolOutcome } from "./tool-outcome.js";

/** After a backup the stats are a bonus: they must not hold the queue for long. */
export const BACKUP_STATS_TIMEOUT_MS = 60_000;
/** After a prune they are the point of reporting, and prune already took its time. */
export const PRUNE_STATS_TIMEOUT_MS = 10 * 60_000;

export interface RawDataStatsOptions {
  /** restic >= 0.15 prints total_uncompressed_size and compression_ratio (and omits zeros). */
  compressionFields: boolean;
}

export function parseRawDataStats(stdout: string, options: RawDataStatsOptions): RepoStats | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(stdout);
  } catch {
    return undefined;
  }
  if (!isObject(parsed)) {
    return undefined;
  }
  const stored = count(parsed.total_size);
  const snapshots = count(parsed.snapshots_count);
  if (!options.compressionFields) {
    // 0.14 always prints both; without them this is not the output we know.
    if (stored === undefined || snapshots === undefined) {
      return undefined;
    }
    return { raw_size_bytes: stored, snapshot_count: snapshots };
  }
  const ratio = parsed.compression_ratio;
  return {
    raw_size_bytes: stored ?? 0,
    total_size_bytes: count(parsed.total_uncompressed_size) ?? 0,
    snapshot_count: snapshots ?? 0,
    ...(typeof ratio === "number" && Number.isFinite(ratio) && ratio > 0 ? { compression_ratio: ratio } : {}),
  };
}

/**
 * Runs `stats --no-lock --json --mode raw-data`; undefined (and a log line) when it could not be
 * read. No lock: it only reads, and it is the run a next job preempts (job-queue.ts), so it is the
 * one most often stopped half-way; a lock it left would fail that job's forget, prune or check.
 */
export async function readRawDataStats(
  deps: RepositoryJobDeps,
  run: JobRun,
  context: RepositoryContext,
  timeoutMs: number,
): Promise<RepoStats | undefined> {
  if (run.signal.reason instanceof NextJobWaiting) {
    skipped(run, run.signal.reason);
    return undefined;
  }
  const version = await deps.toolVersion.version();
  const kept = keepStdout(run);
  const { stdout, errors } = kept;
  const result = await deps.restic.run({
    subcommand: "stats",
    args: ["--no-lock", "--mode", "raw-data"],
    repository: context.repository,
    caps: context.caps,
    json: true,
    signal: run.signal,
    timeoutMs,
    onLine: kept.onLine,
  });
  const fail = (reason: string) => {
    run.log(
      "agent",
      `reading repository stats failed: ${reason}; the ${run.command.kind} itself is not affected`,
    );
    return undefined;
  };
  if (result.kind !== "exited" || result.exitCode !== 0 || result.cancelled || result.timedOut) {
    const reason: unknown = run.signal.reason;
    if (reason instanceof NextJobWaiting) {
      skipped(run, reason);
      return undefined;
    }
    return fail(toolOutcome(result, deps.restic.command, errors.best()).error ?? "restic stats failed");
  }
  const stats = parseRawDataStats(stdout.join("\n"), {
    compressionFields: version !== undefined && isAtLeast(version, 0, 15),
  });
  if (stats === undefined) {
    return fail("restic stats printed no JSON object we can read");
  }
  run.log("agent", `repository stats: ${describeRepoStats(stats)}`);
  return stats;
}

/** Preempted by the next job (job-queue.ts): not a failure of the repository. */
function skipped(run: JobRun, reason: NextJobWaiting): void {
  run.log("agent", `repository stats skipped: ${reason.message}; the next backup reads them`);
}
