/**
 * @module maintenance/last-drill
 * The last restore drill of a host, as its host and maintenance pages show it: when it ended,
 * which snapshot, how many files and bytes it checked, its outcome and error. It is read from the
 * newest ended drill job: the job row already holds the agent's summary, so no second record can
 * disagree with it. The summary is free-form on the wire, so only one that matches DrillSummary is
 * shown; the snapshot then comes from the job's own parameters.
 */
import { type Database, type JobStatus, jobs } from "@fleetback/db";
import { DrillSummary } from "@fleetback/protocol";
import { and, desc, eq, inArray } from "drizzle-orm";
import { Value } from "typebox/value";

const ENDED: JobStatus[] = ["succeeded", "failed", "cancelled", "lost"];

export interface LastDrill {
  jobId: string;
  status: JobStatus;
  finishedAt: Date | null;
  snapshotId: string | null;
  /** Absent when the agent sent no summary it could vouch for (refused, cancelled, lost). */
  summary: DrillSummary | undefined;
  error: string | null;
}

export async function lastDrillOf(db: Database, hostId: string): Promise<LastDrill | undefined> {
  const [job] = await db
    .select()
    .from(jobs)
    .where(and(eq(jobs.hostId, hostId), eq(jobs.kind, "drill"), inArray(jobs.status, ENDED)))
    .orderBy(desc(jobs.id))
    .limit(1);
  if (!job) {
    return undefined;
  }
  const summary = Value.Check(DrillSummary, job.summary) ? job.summary : undefined;
  const fromParams = job.params.snapshot_id;
  return {
    jobId: job.id,
    status: job.status,
    finishedAt: job.finishedAt,
    snapshotId: summary?.snapshot_id ?? (typeof fromParams === "string" ? fromParams : null),
    summary,
    error: job.error,
  };
}

export function lastDrillJson(drill: LastDrill | undefined) {
  if (drill === undefined) {
    return null;
  }
  return {
    job_id: drill.jobId,
    status: drill.status,
    finished_at: drill.finishedAt?.toISOString() ?? null,
    snapshot_id: drill.snapshotId,
    files_in_snapshot: drill.summary?.files_in_snapshot ?? null,
    files_checked: drill.summary?.files_checked ?? null,
    bytes_checked: drill.summary?.bytes_checked ?? null,
    mismatch_count: drill.summary?.mismatch_count ?? null,
    mismatches: drill.summary?.mismatches ?? [],
    error: drill.error,
  };
}
