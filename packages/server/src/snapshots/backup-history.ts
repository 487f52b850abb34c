/**
 * @module snapshots/backup-history
 * The host's recent successful backups and repository sizes, for the snapshots page's charts:
 * data added from the tool's summary (`data_added`: what the backup wrote to the repository, not
 * the bytes it read), duration from the job's start and finish, and the stored size per UTC day
 * from repository_sizes (raw size, the repository's bytes on disk).
 */
import { type Database, jobs, repositorySizes, sourceGroups } from "@fleetback/db";
import { and, asc, desc, eq, gte, isNotNull } from "drizzle-orm";
import type { BackupRun, RepositorySizePoint } from "./chart.js";

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
      dataAdded: numberOf(summary.data_added),
      durationSeconds: row.startedAt
        ? Math.max(0, (row.finishedAt.getTime() - row.startedAt.getTime()) / 1000)
        : undefined,
    });
  }
  return runs;
}

/** Days of repository size the chart shows. */
export const REPOSITORY_SIZE_DAYS = 90;

/** The days the repository size chart spans, from its first day to today, figures or not. */
export function repositorySizeRange(now: Date): { from: Date; to: Date } {
  const today = new Date(`${now.toISOString().slice(0, 10)}T00:00:00Z`);
  return { from: new Date(today.getTime() - REPOSITORY_SIZE_DAYS * 86_400_000), to: today };
}

export async function listRepositorySizes(
  db: Database,
  hostId: string,
  now: Date,
): Promise<RepositorySizePoint[]> {
  const since = new Date(now.getTime() - REPOSITORY_SIZE_DAYS * 86_400_000).toISOString().slice(0, 10);
  const rows = await db
    .select({ day: repositorySizes.day, raw: repositorySizes.rawSizeBytes })
    .from(repositorySizes)
    .where(and(eq(repositorySizes.hostId, hostId), gte(repositorySizes.day, since)))
    .orderBy(asc(repositorySizes.day));
  return rows.flatMap((row) => (row.raw === null ? [] : [{ day: row.day, storedBytes: row.raw }]));
}
