/**
 * @module restic/guard-verdict
 * What the repository guard (repository-guard.ts) found about a restic run that failed; type-only,
 * so that the jobs read it without importing the guard.
 */
import type { LockHolder } from "./lock-holder.js";

export interface RepositoryUnreachable {
  /** "connection refused", "no such host", …: the last cause restic printed. */
  cause: string;
  /** How long the repository went unanswered before restic stopped; undefined when not measured. */
  silentMs: number | undefined;
  /** True when the agent stopped restic; false when restic gave up on its own. */
  stoppedByAgent: boolean;
}

export interface GuardVerdict {
  /** The repository did not answer: the command failed for that, not for anything of its own. */
  unreachable?: RepositoryUnreachable;
  /** The command was refused by a lock that `restic unlock` did not remove (not stale to restic). */
  locked?: LockHolder & { unlockRan: boolean };
  /**
   * The command ran a second time after `restic unlock`: the error text of that second run, which
   * replaces what a job collected over both (the first run's lock message).
   */
  afterUnlock?: { error: string | undefined };
}
