/**
 * @module jobs/snapshot-listing
 * After a job that changed (or may have changed) the snapshot list: `restic snapshots --no-lock
 * --json`, turned into a `snapshots.report` by snapshots-report.ts. The listing only reads, and the
 * host's jobs run one at a time, so it takes no lock: creating and removing one costs two writes
 * and ~0.2 s on every backup (issue 19, B1), a stale lock left by a killed agent never blocks it,
 * and a listing stopped half-way leaves none behind. A failure here is logged and never changes
 * the job's status: the job's own work is done either way.
 */

import type { Snapshot } from "@fleetback/protocol";
import { parseSnapshots, splitReport } from "../restic/snapshots-report.js";
import type { JobRun } from "./job-types.js";
import { keepStdout } from "./kept-stdout.js";
import type { RepositoryContext, RepositoryJobDeps } from "./repository-job.js";
import { toolOutcome } from "./tool-outcome.js";

/** The snapshot listing after a backup, forget or prune is bounded by 60 s. */
export const SNAPSHOTS_TIMEOUT_MS = 60_000;

/**
 * restic prints the whole list as one JSON line (~700 bytes a snapshot), so the default 16 MiB line
 * cap would end listing at ~23,000 snapshots; this one holds the 200,000 the server accepts.
 */
export const SNAPSHOTS_MAX_LINE_LENGTH = 192 * 1024 * 1024;

/**
 * Reports the snapshot list; resolves to the snapshots the repository holds (newest first), if
 * known.
 * `signal` replaces the run's own (a backup's listing after its `job.finished` ignores preemption).
 */
export async function reportSnapshotList(
  deps: RepositoryJobDeps,
  run: JobRun,
  context: RepositoryContext,
  signal: AbortSignal = run.signal,
): Promise<readonly Snapshot[] | undefined> {
  const kept = keepStdout(run);
  const { stdout, errors } = kept;
  const result = await deps.restic.run({
    subcommand: "snapshots",
    args: ["--no-lock"],
    repository: context.repository,
    caps: context.caps,
    json: true,
    signal,
    timeoutMs: SNAPSHOTS_TIMEOUT_MS,
    maxLineLength: SNAPSHOTS_MAX_LINE_LENGTH,
    onLine: kept.onLine,
  });
  const fail = (reason: string) => {
    run.log("agent", `listing snapshots failed: ${reason}; the ${run.command.kind} itself is not affected`);
    return undefined;
  };
  if (result.kind !== "exited" || result.exitCode !== 0 || result.cancelled || result.timedOut) {
    return fail(toolOutcome(result, deps.restic.command, errors.best()).error ?? "restic snapshots failed");
  }
  const parsed = parseSnapshots(stdout.join("\n"));
  if (!parsed.ok) {
    return fail(parsed.reason);
  }
  // A long list goes out in parts (protocol 2), one reportSnapshots call per frame.
  const { reports, omitted } = splitReport(parsed.snapshots, deps.clock.now().toISOString());
  if (omitted > 0) {
    const reported = parsed.snapshots.length - omitted;
    const message = `the snapshot list exceeds what one report can carry: reported ${reported}, left out ${omitted}`;
    deps.log.warn(message, { job_id: run.command.job_id, reported, omitted });
    run.log("agent", `warning: ${message}`);
  }
  for (const report of reports) {
    deps.reportSnapshots(report);
  }
  return parsed.snapshots;
}
