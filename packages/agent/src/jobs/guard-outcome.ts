/**
 * @module jobs/guard-outcome
 * A failed tool step in the words of the repository guard's verdict (restic/repository-guard.ts):
 * an unreachable repository says so, and structurally (`repository_unreachable`, protocol 11) so
 * that the server can mark the repository and alert; a lock that `restic unlock` left names its
 * holder and the command an admin may run. restic's own last line said neither ("context
 * canceled", "restic was ended by SIGKILL", or the first run's lock message).
 */
import { redactUrl } from "@fleetback/crypto";
import { formatTimeout } from "../config/job-timeouts.js";
import type { GuardVerdict, RepositoryUnreachable } from "../restic/guard-verdict.js";
import type { LockHolder } from "../restic/lock-holder.js";
import type { JobOutcome } from "./job-types.js";

/** Which repository a job's verdict is about: a copy reads the host's and writes the mirror. */
export type GuardSubject = "the repository" | "the mirror" | "the repository or its mirror";

export function unreachableError(
  unreachable: RepositoryUnreachable,
  subject: GuardSubject = "the repository",
): string {
  // restic that fails at its first request (0.14 opening a repository) was not kept waiting.
  const silent =
    unreachable.silentMs === undefined || unreachable.silentMs < 1_000
      ? ""
      : ` for ${formatTimeout(unreachable.silentMs)}`;
  const stopped = unreachable.stoppedByAgent ? "; the agent stopped restic" : "";
  const verb = subject === "the repository or its mirror" ? "one of them is" : "it is";
  return `${subject} did not answer${silent} (${unreachable.cause}): ${verb} unreachable${stopped}`;
}

export function lockedError(holder: LockHolder & { unlockRan: boolean }, repositoryUrl: string): string {
  const since = [
    holder.createdAt === undefined ? undefined : `created ${holder.createdAt}`,
    holder.age === undefined ? undefined : `${holder.age} ago`,
  ].filter((part) => part !== undefined);
  const held = `the repository is locked${holder.exclusive ? " exclusively" : ""} by PID ${holder.pid} on ${holder.host} (user ${holder.user}${since.length === 0 ? "" : `, ${since.join(", ")}`})`;
  const kept = holder.unlockRan
    ? "; restic unlock left it, as restic does not find it stale (its process may still run on that host, and it is less than 30 minutes old)"
    : "";
  return `${held}${kept}. If no restic runs on ${holder.host} any more, an admin may remove it with: restic -r ${redactUrl(repositoryUrl)} unlock --remove-all`;
}

/**
 * The outcome of a failed tool step, read with its verdict; anything else is left as it is. A
 * copy's own error already says which side it was working on ("the mirror cannot be opened: …"),
 * so the verdict follows it rather than replacing it.
 */
export function settleGuardVerdict(
  outcome: JobOutcome,
  verdict: GuardVerdict | undefined,
  where: { url: string; subject: GuardSubject },
): JobOutcome {
  if (outcome.status !== "failed" || verdict === undefined) {
    return outcome;
  }
  if (verdict.unreachable !== undefined) {
    const sentence = unreachableError(verdict.unreachable, where.subject);
    const error =
      where.subject === "the repository or its mirror" && outcome.error !== undefined
        ? `${outcome.error}; ${sentence}`
        : sentence;
    return { ...outcome, error, repository_unreachable: true };
  }
  // A copy's lock may be on either side, and its URL would name one of them only.
  if (verdict.locked !== undefined && where.subject !== "the repository or its mirror") {
    return { ...outcome, error: lockedError(verdict.locked, where.url) };
  }
  const retried = verdict.afterUnlock?.error;
  return retried === undefined ? outcome : { ...outcome, error: retried };
}
