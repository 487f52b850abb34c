/**
 * @module jobs/kept-job
 * A keeper's job on another host's repository (`command.run.kept`, protocol 12), or a restore of
 * another host's snapshot onto this one (protocol 14, issue 38). It runs with the credentials
 * pushed for it alone (restic/credential-store.ts `forCommand`); here is which kinds may come
 * that way. Anything else is refused on arrival: an `init` or a `backup` marked kept would
 * otherwise run on this agent's own repository with its own slots.
 */
import type { CommandRun } from "@fleetback/protocol";

/**
 * Upkeep and its mirror copies (what a keeper does for the hosts it keeps), and a restore onto
 * this host from another host's repository: each reads or writes only the repository it was
 * given for the job.
 */
export const KEPT_JOB_KINDS: readonly CommandRun["kind"][] = [
  "forget",
  "prune",
  "check",
  "unlock",
  "copy",
  "restore",
];

export const NO_JOB_CREDENTIALS_ERROR = "no credentials pushed for this job";

/** Why a `kept` command cannot run here, or undefined (also for every command that is not kept). */
export function keptRefusal(command: CommandRun): string | undefined {
  if (command.kept !== true) {
    return undefined;
  }
  if (!KEPT_JOB_KINDS.includes(command.kind)) {
    return `${command.kind} does not run for another host; only ${KEPT_JOB_KINDS.join(", ")} do`;
  }
  return command.on_mirror === true
    ? "a kept job never runs on_mirror: the keeper copies to the mirror instead"
    : undefined;
}
