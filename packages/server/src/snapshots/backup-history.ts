/**
 * @module snapshots/backup-history
 * The host's recent successful backups, for the snapshots page's size and duration charts:
 * size from the tool's summary (total_bytes_processed, else data_added), duration from the
 * job's start and finish.
 */
import { type Database, jobs, sourceGroups } from "@fleetback/db";
import { and, desc, eq, isNotNull } from "drizzle-orm";
import type { BackupRun } from "./chart.js";

/** Enough points for a readable chart; older runs are left out. */
export const BACKUP_HISTORY_LIMIT = 300;

function numberOf(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : undefined;
}

export async function listBackupRuns(db: Database, hostId: string): Promise<BackupRun[]> {
  const rows = await db
    .select({
      groupId: jobs.sourceGroupId,
      groupName: sourceGroups.name,
      summary: jobs.summary,
      startedAt: jobs.startedAt,
      finishedAt: jobs.finishedAt,
    })
    .from(jobs)
    .leftJoin(sourceGroups, eq(sourceGroups.id, jobs.sourceGroupId))
    .where(
      and(
        eq(jobs.hostId, hostId),
        eq(jobs.kind, "backup"),
        eq(jobs.status, "succeeded"),
        isNotNull(jobs.finishedAt),
      ),
    )
    .orderBy(desc(jobs.finishedAt))
    .limit(BACKUP_HISTORY_LIMIT);
  const runs: BackupRun[] = [];
  for (const row of rows) {
    if (!row.finishedAt) {
      continue;
    }
    const summary = row.summary ?? {};
    runs.push({
      group: row.groupName ?? (row.groupId ? "deleted group" : "no group"),
      finishedAt: row.finishedAt,
      bytes: numberOf(summary.total_bytes_processed) ?? numberOf(summary.data_added),
      durationSeconds: row.startedAt
        ? Math.max(0, (row.finishedAt.getTime() - row.startedAt.getTime()) / 1000)
        : undefined,
    });
  }
  return runs;
}
