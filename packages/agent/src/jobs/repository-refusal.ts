/**
 * @module jobs/repository-refusal
 * What init and every repository job check before restic runs: that credentials for the
 * repository were pushed, and that restic can work on it from here (a local path the unit keeps
 * read-only, local-repository.ts). A refusal is logged and fails the job.
 */
import type { Repository } from "@fleetback/protocol";
import type { JobOutcome, JobRun } from "./job-types.js";

export const NO_CREDENTIALS_ERROR = "no repository credentials";

/** A sentence when restic could not work on the repository at `url` from here; undefined: it can. */
export type RepositoryProblem = (url: string) => Promise<string | undefined>;

export type UsableRepository = { ok: true; repository: Repository } | { ok: false; outcome: JobOutcome };

export async function usableRepository(
  repositoryProblem: RepositoryProblem | undefined,
  run: Pick<JobRun, "log">,
  repository: Repository | undefined,
): Promise<UsableRepository> {
  if (repository === undefined) {
    run.log("agent", "no repository credentials have been pushed to this agent");
    return { ok: false, outcome: { status: "failed", exit_code: null, error: NO_CREDENTIALS_ERROR } };
  }
  const problem = await repositoryProblem?.(repository.url);
  if (problem !== undefined) {
    run.log("agent", `${problem}; restic was not run`);
    return { ok: false, outcome: { status: "failed", exit_code: null, error: problem } };
  }
  return { ok: true, repository };
}
