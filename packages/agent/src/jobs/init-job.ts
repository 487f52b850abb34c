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
import { type RepositoryProblem, usableRepository } from "./repository-refusal.js";
import { toolOutcome } from "./tool-outcome.js";

export const ALREADY_INITIALISED_TEXT = "config file already exists";

export interface InitJobDeps {
  restic: Restic;
  toolVersion: ToolVersionProbe;
  credentials: CredentialStore;
  repositoryProblem?: RepositoryProblem;
  /** Reports the repository's snapshot list after a successful init (snapshot-listing.ts). */
  listSnapshots?: (run: JobRun, context: { repository: Repository; caps: BandwidthCaps }) => Promise<unknown>;
}

export function createInitJob(deps: InitJobDeps): JobHandler<CommandRunInit> {
  return async (run) => {
    const usable = await usableRepository(deps.repositoryProblem, run, deps.credentials.repository("repo"));
    if (!usable.ok) {
      return usable.outcome;
    }
    const { repository } = usable;
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
