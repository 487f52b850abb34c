/**
 * @module jobs/prune-job
 * `prune` with the admin slot's credentials (delete authority; the server pushes them with
 * `config.update` slot admin just before each prune). restic prints text only, even with --json
 * (testdata/restic `prune`), so its lines go to the job log (progress lines as job.progress). After
 * success: `repo.stats` with `last_prune_at` and the raw-data sizes (raw-data-stats.ts; a stats
 * failure still reports `last_prune_at`), then the snapshot list. On storage that refuses deletes
 * the job fails saying so (append-only.ts): 0.18 exits 1 with `Fatal: unexpected HTTP response
 * (403)`, and 0.14, which retried each delete for ~45 s, is stopped at the first refusal.
 */
import type { CommandRunPrune } from "@fleetback/protocol";
import { watchDeleteRefusal } from "./append-only.js";
import type { JobHandler } from "./job-types.js";
import { PRUNE_STATS_TIMEOUT_MS, readRawDataStats } from "./raw-data-stats.js";
import { isCleanSuccess, type RepositoryJobDeps, runRepositoryJob } from "./repository-job.js";
import { reportSnapshotList } from "./snapshot-listing.js";
import { runTextTool } from "./text-output.js";
import { toolOutcome } from "./tool-outcome.js";

export function createPruneJob(deps: RepositoryJobDeps): JobHandler<CommandRunPrune> {
  return (run) =>
    runRepositoryJob(deps, run, {
      async tool(context) {
        const refusal = watchDeleteRefusal(run.signal, (line) => run.log("agent", line));
        const { result, error } = await runTextTool(deps, { ...run, signal: refusal.signal }, context, {
          subcommand: "prune",
          observe: refusal.observe,
        });
        return refusal.settle(toolOutcome(result, deps.restic.command, error));
      },
      async report(context, outcome) {
        if (!isCleanSuccess(run, outcome)) {
          return;
        }
        const prunedAt = deps.clock.now().toISOString();
        const stats = await readRawDataStats(deps, run, context, PRUNE_STATS_TIMEOUT_MS);
        deps.reportStats({ ...stats, last_prune_at: prunedAt });
        await reportSnapshotList(deps, run, context);
      },
    });
}
