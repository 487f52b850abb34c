/**
 * @module restic/guard-record
 * Carries the repository guard's verdict (repository-guard.ts) from restic to the job whose tool
 * step it failed. The queue runs one job at a time, and a job's after-finish work ends before the
 * next job starts (job-queue.ts), so "the last guarded run that failed since the step began" is
 * that job's: `runRepositoryJob` begins and takes it around the tool step, and no job has to
 * thread it through its own restic calls.
 */
import type { GuardVerdict } from "./guard-verdict.js";

export interface GuardRecord {
  /** A tool step starts: what came before is not its verdict. */
  begin(): void;
  /** A guarded run failed; its verdict replaces an earlier one of the step. */
  failed(verdict: GuardVerdict): void;
  /** The step's last failed run's verdict, once. */
  take(): GuardVerdict | undefined;
}

export function createGuardRecord(): GuardRecord {
  let last: GuardVerdict | undefined;
  return {
    begin() {
      last = undefined;
    },
    failed(verdict) {
      last = verdict;
    },
    take() {
      const verdict = last;
      last = undefined;
      return verdict;
    },
  };
}
