/**
 * @module jobs/check-job
 * `check`: `restic check [--read-data-subset=<subset>]` in text mode (0.14 ignores --json for
 * check, and the verdict reads the same in both versions' text). Its verdict becomes
 * `repo.stats` `last_check_status`:
 *
 * - `ok`: exit 0 (restic printed `no errors were found`).
 * - `errors`: restic ran and found damage: a non-zero exit together with `repository contains
 *   errors` (the final `Fatal:` line on 0.14 and 0.18; testdata/restic `check-corrupt`). The job fails.
 * - `failed`: the check could not run to a verdict (locked or unreachable repository, wrong
 *   password, restic missing, timeout). The job fails.
 *
 * A cancelled check learned nothing and reports nothing, and so do checks refused before restic
 * started (no credentials, failed pre hook): their `job.finished` says why.
 */
import { type CheckStatus, type CommandRunCheck, READ_DATA_SUBSET_PATTERN } from "@fleetback/protocol";
import { failed, type JobHandler, type JobOutcome } from "./job-types.js";
import { type RepositoryJobDeps, runRepositoryJob } from "./repository-job.js";
import { runTextTool } from "./text-output.js";
import { toolOutcome } from "./tool-outcome.js";

export const CONTAINS_ERRORS_TEXT = "repository contains errors";
export const CHECK_ERRORS_ERROR = "the repository contains errors";

const READ_DATA_SUBSET = new RegExp(READ_DATA_SUBSET_PATTERN);

export function checkArgs(command: CommandRunCheck): string[] {
  const subset = command.check.read_data_subset;
  return subset === undefined ? [] : [`--read-data-subset=${subset}`];
}

export function createCheckJob(deps: RepositoryJobDeps): JobHandler<CommandRunCheck> {
  return async (run) => {
    const subset = run.command.check.read_data_subset;
    if (subset !== undefined && !READ_DATA_SUBSET.test(subset)) {
      const error = `invalid read_data_subset ${JSON.stringify(subset)}; restic was not run`;
      run.log("agent", error);
      return failed(error);
    }
    let status: CheckStatus | undefined;
    return runRepositoryJob(deps, run, {
      async tool(context) {
        let foundErrors = false;
        const { result, error } = await runTextTool(deps, run, context, {
          subcommand: "check",
          args: checkArgs(run.command),
          observe: (line) => {
            if (line.text.includes(CONTAINS_ERRORS_TEXT)) {
              foundErrors = true;
            }
          },
        });
        const outcome: JobOutcome = toolOutcome(result, deps.restic.command, error);
        if (outcome.status === "succeeded") {
          status = "ok";
          return outcome;
        }
        if (outcome.status === "cancelled") {
          return outcome;
        }
        if (result.kind === "exited" && !result.timedOut && result.exitCode !== 0 && foundErrors) {
          status = "errors";
          run.log("agent", "check found errors in the repository; see restic's output above");
          return { ...outcome, error: CHECK_ERRORS_ERROR };
        }
        status = "failed";
        return outcome;
      },
      async report() {
        // A verdict reached before a late cancel is still the repository's state.
        if (status === undefined) {
          return;
        }
        deps.reportStats({ last_check_status: status, last_check_at: deps.clock.now().toISOString() });
      },
    });
  };
}
