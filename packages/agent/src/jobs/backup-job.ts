/**
 * @module jobs/backup-job
 * `backup`: pre hook, `restic backup`, post hook; then `job.finished`; then the snapshot list and
 * the repository's raw-data stats (one `stats` run bounded by a timeout; a failure is logged
 * only). Both are bookkeeping the backup's time should not include: the stats walk every
 * snapshot's trees and grow with the repository (after `job.finished` since protocol 9), and the
 * listing is a second restic that opens the repository again, ~0.6 s of every backup (since
 * protocol 10; the server starts the mirror copy when the list with the new snapshot arrives).
 * A job that arrives meanwhile skips the stats and gives the list LISTING_PREEMPT_GRACE_MS to end
 * (the server counts on it; against a healthy repository it takes ~1 s). Last, the new snapshot's
 * browse index is built (tree-browser.ts `prebuild`), stopped by a next job like the stats, and
 * then the file catalogue (protocol 15) catches up (tree/catalog-catch-up.ts): every snapshot of
 * the group made by this host since its base, in order, the new one last, then those of the
 * repository's other groups with a base. The candidates come from the list just taken, and the
 * host's name from the new snapshot itself (`--host`, or restic's own hostname without it). A next
 * job stops it too: each group keeps the base last applied, and a later backup catches up.
 * argv is `[global flags: caps, --json] backup --tag <tag> [--exclude <p>]... -- <includes...>`,
 * so an include that starts with `-` is never read as a flag. The agent's own config, state and
 * install directories are always excluded (issue 33), whatever the group includes, so that the agent's
 * token never reaches the repository: one literal `--exclude` for each form a snapshot could
 * name them by (restore-helper/agent-dirs.ts). Status lines become throttled
 * `job.progress` and are not logged; every other line is (stderr JSON errors as text). Exit 3
 * means restic wrote the snapshot but could not read some files: the job succeeds, with an error
 * text saying so, because the snapshot exists and is listed; the unreadable files are in
 * the job log. A failed, timed-out or cancelled post hook is logged and changes nothing.
 */
import { type CommandRunBackup, describeBackupSummary, renderStderrLine } from "@fleetback/protocol";
import { parseBackupLine } from "../restic/backup-output.js";
import { createErrorCollector } from "../restic/error-collector.js";
import { literalPattern } from "../restic/literal-pattern.js";
import type { ResticResult } from "../restic/restic.js";
import { agentDirForms } from "../restore-helper/agent-dirs.js";
import type { CatalogRequest } from "../tree/catalog-catch-up.js";
import { type JobHandler, type JobOutcome, preemptedAfter, stoppedForGood } from "./job-types.js";
import { createProgressThrottle } from "./progress-throttle.js";
import { BACKUP_STATS_TIMEOUT_MS, readRawDataStats } from "./raw-data-stats.js";
import { type RepositoryJobDeps, runRepositoryJob } from "./repository-job.js";
import { reportSnapshotList } from "./snapshot-listing.js";
import { toolOutcome } from "./tool-outcome.js";

export { SNAPSHOTS_TIMEOUT_MS } from "./snapshot-listing.js";

export const UNREADABLE_FILES_ERROR = "some files could not be read";

/** How long a backup's snapshot listing may still run once the next job is waiting. */
export const LISTING_PREEMPT_GRACE_MS = 10_000;

export type BackupJobDeps = RepositoryJobDeps & {
  /**
   * Builds a snapshot's browse index ahead of browsing, resolving to its directory when it was
   * built; absent when the host opts out.
   */
  prebuildTreeIndex?: (snapshotId: string, signal: AbortSignal) => Promise<string | undefined>;
  /**
   * Catalogues the group's snapshots since its base, then the other groups' (protocol 15), once
   * the new snapshot's index is built; never throws.
   */
  catalogue?: (request: CatalogRequest, signal: AbortSignal) => Promise<unknown>;
  /** The agent's config, state and install directories: never backed up. */
  agentDirs: readonly string[];
};

/**
 * The listed snapshot a summary names: restic 0.14's summary carries the short id, and the server
 * browses by the full one.
 */
export function backedUpSnapshot(
  snapshots: readonly { id: string }[] | undefined,
  summaryId: unknown,
): string | undefined {
  if (typeof summaryId !== "string" || summaryId === "") {
    return undefined;
  }
  return snapshots?.find((snapshot) => snapshot.id.startsWith(summaryId.toLowerCase()))?.id;
}

/** `agentDirs` are the forms to exclude (agentDirForms), each made literal. */
export function backupArgs(command: CommandRunBackup, agentDirs: readonly string[] = []): string[] {
  return [
    // The host's stable name (protocol 11), in the one-argument form so that no value can read
    // as a flag; without it restic uses the machine's current hostname.
    ...(command.host === undefined ? [] : [`--host=${command.host}`]),
    "--tag",
    command.tag,
    ...command.excludes.flatMap((pattern) => ["--exclude", pattern]),
    ...agentDirs.flatMap((dir) => ["--exclude", literalPattern(dir)]),
    "--",
    ...command.includes,
  ];
}

export function backupOutcome(result: ResticResult, command: string, error: string | undefined): JobOutcome {
  if (result.kind === "exited" && !result.cancelled && !result.timedOut && result.exitCode === 3) {
    return { status: "succeeded", exit_code: 3, error: UNREADABLE_FILES_ERROR };
  }
  return toolOutcome(result, command, error);
}

export function createBackupJob(deps: BackupJobDeps): JobHandler<CommandRunBackup> {
  return (run) =>
    runRepositoryJob(deps, run, {
      async tool({ repository, caps }) {
        const throttle = createProgressThrottle(run.progress, deps.timers, deps.clock);
        const errors = createErrorCollector();
        let summary: JobOutcome["summary"];
        // Resolved per backup: a symlink changed since the agent started is followed too.
        const agentDirs = agentDirForms(deps.agentDirs);
        if (agentDirs.length > 0) {
          run.log("agent", `the agent's own directories are never backed up: ${agentDirs.join(", ")}`);
        }
        const result = await deps.restic.run({
          subcommand: "backup",
          args: backupArgs(run.command, agentDirs),
          repository,
          caps,
          json: true,
          signal: run.signal,
          onLine: (line) => {
            if (line.stream === "stderr") {
              const text = renderStderrLine(line.text);
              errors.observe("stderr", line.text.includes('"exit_error"') ? line.text : text);
              run.log("stderr", text);
              return;
            }
            const parsed = parseBackupLine(line.text);
            if (parsed.kind === "status") {
              throttle.push(parsed.progress);
              return;
            }
            if (parsed.kind === "unmeasured") {
              return;
            }
            if (parsed.kind === "summary") {
              summary = parsed.summary;
              run.log("stdout", describeBackupSummary(parsed.summary));
              return;
            }
            run.log("stdout", line.text);
          },
        });
        throttle.flush();
        const base = backupOutcome(result, deps.restic.command, errors.best());
        return summary === undefined ? base : { ...base, summary };
      },
      async afterFinish(context, outcome) {
        // The queue's preemption aborts the signal too; only a cancel or shutdown means "stop".
        if (outcome.status !== "succeeded" || stoppedForGood(run.signal)) {
          return;
        }
        const listed = await reportSnapshotList(
          deps,
          run,
          context,
          preemptedAfter(run.signal, LISTING_PREEMPT_GRACE_MS, deps.timers),
        );
        if (stoppedForGood(run.signal)) {
          return;
        }
        // Sizes change with every backup; one bounded stats run keeps the host page current.
        const stats = await readRawDataStats(deps, run, context, BACKUP_STATS_TIMEOUT_MS);
        if (stats !== undefined) {
          deps.reportStats(stats);
        }
        const snapshotId = backedUpSnapshot(listed, outcome.summary?.snapshot_id);
        if (deps.prebuildTreeIndex === undefined || snapshotId === undefined || run.signal.aborted) {
          return;
        }
        // The new snapshot first, pinned: the one browsed first, even if the catalogue is stopped.
        const indexDir = await deps.prebuildTreeIndex(snapshotId, run.signal);
        const made = listed?.find((snapshot) => snapshot.id === snapshotId);
        if (
          deps.catalogue !== undefined &&
          indexDir !== undefined &&
          listed !== undefined &&
          made !== undefined &&
          !run.signal.aborted
        ) {
          await deps.catalogue(
            {
              repositoryUrl: context.repository.url,
              tag: run.command.tag,
              hostname: made.hostname,
              snapshots: listed,
            },
            run.signal,
          );
        }
      },
    });
}
