/**
 * @module alerts/job-alerts
 * From a job's end to its alert: a failed job
 * raises `<kind>_failed`, keyed by the source group for backups and by nothing for repository
 * jobs; a success of the same kind and key resolves it. A backup failure that was queued for a
 * retry raises nothing yet (the retry may well succeed); the retry that gives up raises it. A lost
 * job counts as failed, since what it was meant to do did not happen. A cancel is an operator's
 * decision and touches no alert, and so is a restore the host refused before restic ran
 * (restore/restore-refusal.ts): the operator's request, not the host, was wrong. Only a newly opened alert (and, per channel, a resolution) is
 * notified. What the job's end says about the host's repository (unreachable, or answering
 * again) goes to repository-alerts.ts first; a job that failed because the repository did not
 * answer raises only that alert. Never throws: a broken alert must not break job handling.
 */
import { type Database, hosts, type JobKind, sourceGroups } from "@fleetback/db";
import { eq } from "drizzle-orm";
import type { Clock } from "../clock.js";
import type { Ids } from "../ids.js";
import type { Logger } from "../log.js";
import type { AlertContext } from "../notifications/message.js";
import type { Notifier } from "../notifications/notifier-port.js";
import { type AlertKey, type AlertKind, raiseAlert, resolveKey } from "./alerts.js";
import { isRepositoryOutage, recordRepositoryState, repositoryKey } from "./repository-alerts.js";
import { restoreRefusal } from "./restore-refusal.js";

export interface JobEnd {
  jobId: string;
  hostId: string;
  kind: JobKind;
  sourceGroupId: string | null;
  /** A forget, prune or check of the host's mirror (`on_mirror`): its failures are the mirror's. */
  onMirror?: boolean;
  /**
   * A restore of another host's snapshot onto this one (issue 38): its alert names that host, and
   * what it says about a repository is about that host's, not this one's.
   */
  fromHostName?: string;
  status: "succeeded" | "failed" | "cancelled" | "lost";
  exitCode: number | null;
  error: string | null;
  /** A pending run took over: the failure is not final yet. */
  retryQueued?: boolean;
  /** The agent said the repository did not answer (`job.finished.repository_unreachable`). */
  repositoryUnreachable?: boolean;
}

export interface JobAlerts {
  jobEnded(end: JobEnd): Promise<void>;
}

export interface JobAlertDeps {
  db: Database;
  ids: Ids;
  log: Logger;
  clock: Clock;
  notifier: Notifier;
}

/**
 * A drill's failure says more than "drill failed": the repository could not give data back; a
 * copy's, that the second copy of the data is falling behind.
 */
function alertKindOf(kind: JobKind): AlertKind {
  return kind === "drill"
    ? "restore_drill_failed"
    : kind === "copy"
      ? "mirror_failed"
      : (`${kind}_failed` as AlertKind);
}

const JOB_NAMES: Partial<Record<JobKind, string>> = { drill: "restore drill", copy: "copy to the mirror" };

export function keyOf(end: Pick<JobEnd, "hostId" | "kind" | "sourceGroupId" | "onMirror">): AlertKey {
  if (end.onMirror === true) {
    // One key per upkeep kind: a good copy must not resolve a failing prune of the mirror.
    return { hostId: end.hostId, kind: "mirror_failed", dedupKey: end.kind };
  }
  return {
    hostId: end.hostId,
    kind: alertKindOf(end.kind),
    dedupKey: end.kind === "backup" ? (end.sourceGroupId ?? "") : "",
  };
}

function messageOf(end: JobEnd): string {
  const name =
    end.onMirror === true
      ? `${end.kind} on the mirror`
      : end.fromHostName !== undefined
        ? `restore of ${end.fromHostName}'s snapshot`
        : (JOB_NAMES[end.kind] ?? end.kind);
  const what = end.status === "lost" ? `${name} job lost` : `${name} failed`;
  if (end.error) {
    return `${what}: ${end.error}`;
  }
  return end.exitCode === null ? what : `${what} with exit code ${end.exitCode}`;
}

async function contextOf(db: Database, key: AlertKey): Promise<AlertContext> {
  const [host] = await db.select({ name: hosts.name }).from(hosts).where(eq(hosts.id, key.hostId));
  let sourceGroupName: string | undefined;
  if (key.kind === "backup_failed" && key.dedupKey) {
    const [group] = await db
      .select({ name: sourceGroups.name })
      .from(sourceGroups)
      .where(eq(sourceGroups.id, key.dedupKey));
    sourceGroupName = group?.name;
  }
  return { hostName: host?.name ?? key.hostId, sourceGroupName };
}

export function createJobAlerts(deps: JobAlertDeps): JobAlerts {
  return {
    async jobEnded(end) {
      const now = deps.clock.now();
      try {
        if (end.fromHostName === undefined) {
          await recordRepositoryState(deps, end, () => contextOf(deps.db, repositoryKey(end.hostId)), now);
        }
      } catch (err) {
        deps.log.error({ err, job_id: end.jobId }, "could not record the repository state of a finished job");
      }
      try {
        const key = keyOf(end);
        if (end.status === "succeeded") {
          const resolved = await resolveKey(deps.db, key, now);
          if (resolved) {
            deps.log.info({ alert_id: resolved.id, host_id: end.hostId, kind: key.kind }, "alert resolved");
            deps.notifier.alertResolved(resolved, await contextOf(deps.db, key));
          }
          return;
        }
        // A restore the host refused before restic ran is the operator's mistake, not the host failing.
        if (
          end.status === "cancelled" ||
          end.retryQueued ||
          // Another host's repository not answering is no outage of this host's: the restore's own
          // alert says it instead.
          (end.fromHostName === undefined && isRepositoryOutage(end)) ||
          restoreRefusal(end) !== undefined
        ) {
          return;
        }
        const { alert, opened } = await raiseAlert(
          deps,
          key,
          { message: messageOf(end), jobId: end.jobId },
          now,
        );
        if (opened) {
          deps.log.warn({ alert_id: alert.id, host_id: end.hostId, kind: key.kind }, "alert opened");
          deps.notifier.alertOpened(alert, await contextOf(deps.db, key));
        }
      } catch (err) {
        deps.log.error({ err, job_id: end.jobId }, "could not record the alert of a finished job");
      }
    },
  };
}
