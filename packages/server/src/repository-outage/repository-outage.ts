/**
 * @module repository-outage/repository-outage
 * A host's repository that does not answer (issue 31). The agent fails a job whose restic could
 * not reach the repository with `job.finished.repository_unreachable` (protocol 11); the first
 * such job opens the host's outage, later ones extend it, and the next job of the host that
 * succeeds ends it (it reached the repository). One row per host in `repository_outages`, written
 * in one statement each way, so two servers reporting at once never open two.
 */
import { type Database, type RepositoryOutage, repositoryOutages } from "@fleetback/db";
import { eq, sql } from "drizzle-orm";

export interface FailedJob {
  hostId: string;
  jobId: string;
  error: string;
  at: Date;
}

/** Opens the host's outage, or extends the open one; returns it as it now is. */
export async function recordOutage(db: Database, failed: FailedJob): Promise<RepositoryOutage> {
  const error = failed.error.slice(0, 2_000);
  const [row] = await db
    .insert(repositoryOutages)
    .values({
      hostId: failed.hostId,
      since: failed.at,
      lastFailedAt: failed.at,
      lastError: error,
      lastJobId: failed.jobId,
    })
    .onConflictDoUpdate({
      target: repositoryOutages.hostId,
      set: {
        lastFailedAt: failed.at,
        lastError: error,
        lastJobId: failed.jobId,
        failedJobs: sql`${repositoryOutages.failedJobs} + 1`,
      },
    })
    .returning();
  if (!row) {
    throw new Error("upsert into repository_outages returned no row");
  }
  return row;
}

/** Ends the host's outage; returns it if there was one. */
export async function endOutage(db: Database, hostId: string): Promise<RepositoryOutage | undefined> {
  const [row] = await db.delete(repositoryOutages).where(eq(repositoryOutages.hostId, hostId)).returning();
  return row;
}

export async function loadOutage(db: Database, hostId: string): Promise<RepositoryOutage | undefined> {
  const [row] = await db.select().from(repositoryOutages).where(eq(repositoryOutages.hostId, hostId));
  return row;
}

/** The API's view: null while the repository answers (as far as the server knows). */
export function outageJson(outage: RepositoryOutage | undefined) {
  return outage === undefined
    ? null
    : {
        since: outage.since,
        last_failed_at: outage.lastFailedAt,
        last_error: outage.lastError,
        last_job_id: outage.lastJobId,
        failed_jobs: outage.failedJobs,
      };
}
