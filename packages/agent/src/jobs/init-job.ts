/**
 * @module jobs/init-job
 * `init`: creates the repository. Running it against an existing repository is a no-op that
 * succeeds, so the server's automatic init of a repository someone already created is no failure:
 * restic exits 1 and says `config file already exists` on every version and backend (testdata/restic
 * `init-again`), which is how the agent recognises it.
 *
 * After either success the snapshot list is reported (`listSnapshots`): a repository adopted from
 * before Fleetback, or shared with other machines, already holds snapshots, and the host's pages
 * should show them when its credentials are bound, not only after its first backup (issue 31).
 */
import type { CommandRunInit, Repository } from "@fleetback/protocol";
import type { CredentialStore } from "../restic/credential-store.js";
import type { ToolVersionProbe } from "../restic/detect-version.js";
import { createErrorCollector } from "../restic/error-collector.js";
import type { BandwidthCaps, Restic } from "../restic/restic.js";
import { isAtLeast } from "../restic/version.js";
import type { JobHandler, JobRun } from "./job-types.js";
import { toolOutcome } from "./tool-outcome.js";

export const ALREADY_INITIALISED_TEXT = "config file already exists";
export const NO_CREDENTIALS_ERROR = "no repository credentials";

export interface InitJobDeps {
  restic: Restic;
  toolVersion: ToolVersionProbe;
  credentials: CredentialStore;
  /** A sentence when restic could not create the repository from here (local-repository.ts). */
  repositoryProblem?: (url: string) => Promise<string | undefined>;
  /** Reports the repository's snapshot list after a successful init (snapshot-listing.ts). */
  listSnapshots?: (run: JobRun, context: { repository: Repository; caps: BandwidthCaps }) => Promise<unknown>;
}

export function createInitJob(deps: InitJobDeps): JobHandler<CommandRunInit> {
  return async (run) => {
    const repository = deps.credentials.repository("repo");
    if (repository === undefined) {
      run.log("agent", "no repository credentials have been pushed to this agent");
      return { status: "failed", exit_code: null, error: NO_CREDENTIALS_ERROR };
    }
    const problem = await deps.repositoryProblem?.(repository.url);
    if (problem !== undefined) {
      run.log("agent", `${problem}; restic was not run`);
      return { status: "failed", exit_code: null, error: problem };
    }
    if (run.command.pre_hook !== undefined || run.command.post_hook !== undefined) {
      run.log("agent", "hooks are not run for init by this agent version");
    }
    const version = await deps.toolVersion.version();
    // `init --json` exists since 0.15; 0.14 ignores the flag and prints text (testdata/restic `init`).
    const json = version !== undefined && isAtLeast(version, 0, 15);
    let alreadyExists = false;
    const errors = createErrorCollector();
    const caps = deps.credentials.capsFor(run.command);
    const result = await deps.restic.run({
      subcommand: "init",
      repository,
      caps,
      json,
      signal: run.signal,
      onLine: (line) => {
        if (line.text.includes(ALREADY_INITIALISED_TEXT)) {
          alreadyExists = true;
        }
        errors.observe(line.stream, line.text);
        run.log(line.stream, line.text);
      },
    });
    if (result.kind === "exited" && !result.cancelled && result.exitCode === 1 && alreadyExists) {
      run.log("agent", "the repository already exists; nothing to do");
      await deps.listSnapshots?.(run, { repository, caps });
      return { status: "succeeded", exit_code: 1 };
    }
    const outcome = toolOutcome(result, deps.restic.command, errors.best());
    if (outcome.status === "succeeded") {
      await deps.listSnapshots?.(run, { repository, caps });
    }
    return outcome;
  };
}
