/**
 * @module jobs/unlock-job
 * `unlock` with the admin slot's credentials: removes stale locks only; restic never removes a lock
 * a live process holds (testdata/restic `locked-unlock`). Text output on every version (0.14 always
 * prints `successfully removed locks`, 0.18 prints nothing unless it removed one); nothing to
 * report beyond the job log.
 */
import type { CommandRunUnlock } from "@fleetback/protocol";
import type { JobHandler } from "./job-types.js";
import { type RepositoryJobDeps, runRepositoryJob } from "./repository-job.js";
import { runTextTool } from "./text-output.js";
import { toolOutcome } from "./tool-outcome.js";

export function createUnlockJob(deps: RepositoryJobDeps): JobHandler<CommandRunUnlock> {
  return (run) =>
    runRepositoryJob(deps, run, {
      async tool(context) {
        const { result, error } = await runTextTool(deps, run, context, { subcommand: "unlock" });
        return toolOutcome(result, deps.restic.command, error);
      },
    });
}
