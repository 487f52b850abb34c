/**
 * @module anomaly/anomaly-hold
 * After each successful backup: judged against its source group's recent backups
 * (backup-anomaly.ts, whose module comment gives the thresholds and why); one that looks like an
 * attack opens the host's `backup_anomaly` deletion
 * hold (holds/), so no forget or prune touches its snapshots until an admin has looked. Never
 * throws: the backup succeeded whatever this finds.
 */
import { jobs } from "@fleetback/db";
import { and, desc, eq, lt } from "drizzle-orm";
import type { ServerDeps } from "../deps.js";
import { openHold } from "../holds/deletion-holds.js";
import { judgeBackup } from "./backup-anomaly.js";
import { type BackupFacts, backupFactsOf } from "./backup-facts.js";

/** Earlier backups of the group the baseline is made of. */
export const BASELINE_BACKUPS = 10;

type AnomalyDeps = Pick<ServerDeps, "db" | "ids" | "log" | "notifier" | "clock">;

export async function holdIfAnomalous(deps: AnomalyDeps, hostId: string, jobId: string): Promise<void> {
  try {
    const [job] = await deps.db
      .select({ sourceGroupId: jobs.sourceGroupId, summary: jobs.summary, at: jobs.finishedAt })
      .from(jobs)
      .where(and(eq(jobs.id, jobId), eq(jobs.hostId, hostId)));
    const current = job?.at ? backupFactsOf(job.summary, job.at) : undefined;
    if (job?.sourceGroupId === null || job?.sourceGroupId === undefined || current === undefined) {
      return;
    }
    // Job ids are ULIDs: earlier ids are earlier jobs.
    const earlier = await deps.db
      .select({ summary: jobs.summary, at: jobs.finishedAt })
      .from(jobs)
      .where(
        and(
          eq(jobs.hostId, hostId),
          eq(jobs.kind, "backup"),
          eq(jobs.status, "succeeded"),
          eq(jobs.sourceGroupId, job.sourceGroupId),
          lt(jobs.id, jobId),
        ),
      )
      .orderBy(desc(jobs.id))
      .limit(BASELINE_BACKUPS);
    const history = earlier
      .map((row) => (row.at ? backupFactsOf(row.summary, row.at) : undefined))
      .filter((facts): facts is BackupFacts => facts !== undefined)
      .reverse();
    const verdict = judgeBackup(current, history);
    if (!verdict.anomalous) {
      return;
    }
    await openHold(
      deps,
      {
        hostId,
        kind: "backup_anomaly",
        reason: `a backup looks like an attack: ${verdict.reasons.join("; ")}`,
        details: { job_id: jobId, source_group_id: job.sourceGroupId, reasons: verdict.reasons },
        jobId,
      },
      deps.clock.now(),
    );
  } catch (err) {
    deps.log.error({ err, host_id: hostId, job_id: jobId }, "judging a backup against its baseline failed");
  }
}
