/**
 * @module alerts/repository-alerts
 * From a job's end to the host's repository state (repository-outage.ts) and its
 * `repository_unreachable` alert, keyed by the host alone: a job that failed because the
 * repository did not answer (`job.finished.repository_unreachable`) opens or extends both; any
 * job of the host that succeeds reached the repository, so it ends both. The alert opens even
 * when a retry of the backup was queued: the retry would otherwise go into the same outage
 * without anyone told. It stands for the failed job's own `<kind>_failed` alert, which does not
 * open: one cause, one alert (a backup that stays away still turns overdue). Jobs on the mirror,
 * and copies (which read one repository and write the other), say nothing about the host's
 * repository when they fail, and keep their own alert.
 */
import type { Database, JobKind } from "@fleetback/db";
import type { Ids } from "../ids.js";
import type { Logger } from "../log.js";
import type { AlertContext } from "../notifications/message.js";
import type { Notifier } from "../notifications/notifier-port.js";
import { endOutage, recordOutage } from "../repository-outage/repository-outage.js";
import { type AlertKey, raiseAlert, resolveKey } from "./alerts.js";

export interface RepositoryAlertDeps {
  db: Database;
  ids: Ids;
  log: Logger;
  notifier: Notifier;
}

export interface RepositoryJobEnd {
  jobId: string;
  hostId: string;
  kind: JobKind;
  onMirror?: boolean;
  status: "succeeded" | "failed" | "cancelled" | "lost";
  error: string | null;
  repositoryUnreachable?: boolean;
}

/** The job failed because the host's repository did not answer (not the mirror's). */
export function isRepositoryOutage(end: RepositoryJobEnd): boolean {
  return (
    end.status === "failed" &&
    end.repositoryUnreachable === true &&
    end.onMirror !== true &&
    end.kind !== "copy"
  );
}

export function repositoryKey(hostId: string): AlertKey {
  return { hostId, kind: "repository_unreachable", dedupKey: "" };
}

/** Records what the job's end says about the host's repository; may throw (the caller logs). */
export async function recordRepositoryState(
  deps: RepositoryAlertDeps,
  end: RepositoryJobEnd,
  context: () => Promise<AlertContext>,
  now: Date,
): Promise<void> {
  if (end.onMirror === true) {
    return;
  }
  if (end.status === "succeeded") {
    const ended = await endOutage(deps.db, end.hostId);
    const resolved = await resolveKey(deps.db, repositoryKey(end.hostId), now);
    if (resolved) {
      deps.log.info(
        { alert_id: resolved.id, host_id: end.hostId },
        "repository answers again; alert resolved",
      );
      deps.notifier.alertResolved(resolved, {
        ...(await context()),
        resolvedBecause: `Resolved: the repository answered again (a ${end.kind} job succeeded${ended ? ` after ${ended.failedJobs} failed` : ""}).`,
      });
    }
    return;
  }
  if (!isRepositoryOutage(end)) {
    return;
  }
  const error = end.error ?? "the repository did not answer";
  await recordOutage(deps.db, { hostId: end.hostId, jobId: end.jobId, error, at: now });
  const { alert, opened } = await raiseAlert(
    deps,
    repositoryKey(end.hostId),
    { message: `${end.kind} job: ${error}`, jobId: end.jobId },
    now,
  );
  if (opened) {
    deps.log.warn({ alert_id: alert.id, host_id: end.hostId }, "repository unreachable; alert opened");
    deps.notifier.alertOpened(alert, await context());
  }
}
