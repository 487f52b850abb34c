/**
 * @module sources/retry-ticker
 * Every RETRY_TICK_PERIOD_MS, due pending runs are tried. Under the advisory lock each due row is
 * claimed (its attempt counted and its next slot set, as if this try failed), so another replica
 * never picks it up; after the commit the claimed rows are sent. A sent row is deleted. A row whose
 * retries are used up is deleted and leaves a failed job behind, so the history sees the backup
 * that never ran, and its backup_failed alert is raised.
 *
 * A run waiting only because its host was offline goes when the host is back: its hello makes the
 * host's offline rows due at once (dispatchOnHello), so it leaves with the hello rather than at its
 * backoff slot minutes later while the page still says "host offline". A retry after a transient
 * failure (a locked repository) keeps its backoff: a reconnect does not end the lock.
 */
import {
  type Database,
  hosts,
  jobs,
  type PendingRun,
  pendingRuns,
  sourceGroups,
  withAdvisoryLock,
} from "@fleetback/db";
import { and, asc, eq, gt, lte } from "drizzle-orm";
import { createJobAlerts, type JobEnd } from "../alerts/job-alerts.js";
import type { ServerDeps } from "../deps.js";
import { createJob } from "../jobs/create-job.js";
import { recordJobEnds } from "../jobs/job-metrics.js";
import { startJob } from "../jobs/start-job.js";
import { HOST_OFFLINE_REASON, retryDelayMs } from "../retries/pending-runs.js";
import { type BackupDeps, backupSpec } from "./dispatch-backup.js";

export const RETRY_TICK_PERIOD_MS = 15_000;
const BATCH = 100;

export interface RetryTickReport {
  dispatched: string[];
  rescheduled: string[];
  gaveUp: string[];
}

/** The backup a pending run asks for, as its retry number `run.attempt`. */
function requestOf(run: PendingRun) {
  return {
    hostId: run.hostId,
    actorKind: run.actorKind,
    actorUserId: run.actorUserId,
    scheduleId: run.scheduleId,
    retry: run.attempt,
    runCaps: { up: run.bandwidthUpKbps, down: run.bandwidthDownKbps },
  };
}

async function giveUp(
  deps: BackupDeps,
  tx: Database,
  run: PendingRun,
  group: typeof sourceGroups.$inferSelect,
  now: Date,
): Promise<JobEnd> {
  // Not a start: the job records, failed, a backup that never ran (its spec's row, never sent).
  const { runCaps: _runCaps, ...request } = requestOf(run);
  const spec = backupSpec(deps, { ...request, offline: "refuse" }, group);
  const job = await createJob(
    deps,
    {
      hostId: run.hostId,
      kind: "backup",
      actorKind: run.actorKind,
      actorUserId: run.actorUserId,
      scheduledId: run.scheduleId,
      sourceGroupId: run.sourceGroupId,
      params: spec.params,
    },
    tx,
  );
  const error = `host offline: gave up after ${run.attempt} attempts`;
  await tx.update(jobs).set({ status: "failed", error, finishedAt: now }).where(eq(jobs.id, job.id));
  await recordJobEnds(tx, [job.id]);
  await tx.delete(pendingRuns).where(eq(pendingRuns.id, run.id));
  return {
    jobId: job.id,
    hostId: run.hostId,
    kind: "backup",
    sourceGroupId: run.sourceGroupId,
    status: "failed",
    exitCode: null,
    error,
  };
}

/**
 * Sends the host's runs queued while it was offline, now. Called after its hello is accepted. When
 * another replica's tick holds the lock, the rows are already due and its next tick sends them.
 */
export async function dispatchOnHello(
  deps: BackupDeps & Pick<ServerDeps, "notifier">,
  hostId: string,
  now: Date,
): Promise<RetryTickReport> {
  await deps.db
    .update(pendingRuns)
    .set({ nextAttemptAt: now, updatedAt: now })
    .where(
      and(
        eq(pendingRuns.hostId, hostId),
        eq(pendingRuns.reason, HOST_OFFLINE_REASON),
        gt(pendingRuns.nextAttemptAt, now),
      ),
    );
  return retryTick(deps, now, hostId);
}

/** Tries the due pending runs: all of them, or one host's (`onlyHostId`). */
export async function retryTick(
  deps: BackupDeps & Pick<ServerDeps, "notifier">,
  now: Date,
  onlyHostId?: string,
): Promise<RetryTickReport> {
  const report: RetryTickReport = { dispatched: [], rescheduled: [], gaveUp: [] };
  const failed: JobEnd[] = [];
  const outcome = await withAdvisoryLock(deps.db, "retry-ticker", async (tx) => {
    const due = await tx
      .select({ run: pendingRuns, group: sourceGroups, host: hosts })
      .from(pendingRuns)
      .innerJoin(sourceGroups, eq(sourceGroups.id, pendingRuns.sourceGroupId))
      .innerJoin(hosts, eq(hosts.id, pendingRuns.hostId))
      .where(
        and(
          lte(pendingRuns.nextAttemptAt, now),
          onlyHostId === undefined ? undefined : eq(pendingRuns.hostId, onlyHostId),
        ),
      )
      .orderBy(asc(pendingRuns.nextAttemptAt), asc(pendingRuns.id))
      .limit(BATCH);
    const claimed: typeof due = [];
    for (const row of due) {
      const attempt = row.run.attempt + 1;
      const claim = { ...row.run, attempt };
      if (!deps.hub.isOnline(row.run.hostId) && attempt >= row.group.retryMax) {
        failed.push(await giveUp(deps, tx, claim, row.group, now));
        report.gaveUp.push(row.run.id);
        continue;
      }
      await tx
        .update(pendingRuns)
        .set({
          attempt,
          nextAttemptAt: new Date(now.getTime() + retryDelayMs(row.group.retryBackoffSeconds, attempt + 1)),
          reason: deps.hub.isOnline(row.run.hostId) ? row.run.reason : HOST_OFFLINE_REASON,
          updatedAt: now,
        })
        .where(eq(pendingRuns.id, row.run.id));
      if (deps.hub.isOnline(row.run.hostId)) {
        claimed.push({ ...row, run: claim });
      } else {
        report.rescheduled.push(row.run.id);
      }
    }
    return claimed;
  });
  if (!outcome.ran) {
    return report;
  }
  for (const { run, group, host } of outcome.result) {
    // Refused, not queued again: this row is the queue, and its claim already counted the try.
    const sent = await startJob(
      deps,
      backupSpec(deps, { ...requestOf(run), offline: "refuse" }, group, host),
    );
    if (sent.ok) {
      await deps.db.delete(pendingRuns).where(eq(pendingRuns.id, run.id));
      deps.log.info(
        { host_id: run.hostId, source_group_id: run.sourceGroupId, job_id: sent.job.id, retry: run.attempt },
        "pending backup dispatched",
      );
      report.dispatched.push(run.id);
    } else if (run.attempt >= group.retryMax) {
      failed.push(await deps.db.transaction((tx) => giveUp(deps, tx, run, group, now)));
      report.gaveUp.push(run.id);
    } else {
      report.rescheduled.push(run.id);
    }
  }
  for (const id of report.gaveUp) {
    deps.log.warn({ pending_run_id: id }, "pending backup given up: host stayed offline");
  }
  const alerts = createJobAlerts(deps);
  for (const end of failed) {
    await alerts.jobEnded(end);
  }
  return report;
}
