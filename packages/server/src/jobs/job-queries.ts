/**
 * @module jobs/job-queries
 * Reading jobs and their log lines for the API and pages: filtered, newest first, paged by id
 * (ULIDs sort by creation time, so "before this id" is a stable cursor).
 */
import { type Database, type Job, type JobKind, type JobStatus, jobLogs, jobs, users } from "@fleetback/db";
import { and, asc, desc, eq, gt, lt, type SQL } from "drizzle-orm";
import { notFound } from "../errors.js";

export interface JobFilter {
  hostId?: string | undefined;
  status?: JobStatus | undefined;
  kind?: JobKind | undefined;
  before?: string | undefined;
  limit: number;
}

/** A job with the name of the user who started it (null for schedules, the system, a deleted user). */
export interface JobListRow extends Job {
  actorUsername: string | null;
}

export async function listJobs(db: Database, filter: JobFilter): Promise<JobListRow[]> {
  const conditions: SQL[] = [];
  if (filter.hostId) {
    conditions.push(eq(jobs.hostId, filter.hostId));
  }
  if (filter.status) {
    conditions.push(eq(jobs.status, filter.status));
  }
  if (filter.kind) {
    conditions.push(eq(jobs.kind, filter.kind));
  }
  if (filter.before) {
    conditions.push(lt(jobs.id, filter.before));
  }
  const rows = await db
    .select({ job: jobs, actorUsername: users.username })
    .from(jobs)
    .leftJoin(users, eq(users.id, jobs.actorUserId))
    .where(conditions.length > 0 ? and(...conditions) : undefined)
    .orderBy(desc(jobs.id))
    .limit(filter.limit);
  return rows.map((row) => ({ ...row.job, actorUsername: row.actorUsername }));
}

export async function getJob(db: Database, id: string): Promise<Job> {
  const [job] = await db.select().from(jobs).where(eq(jobs.id, id)).limit(1);
  if (!job) {
    throw notFound(`No job ${id}`);
  }
  return job;
}

export async function listJobLogs(db: Database, jobId: string, options: { afterSeq: number; limit: number }) {
  return db
    .select({ seq: jobLogs.seq, stream: jobLogs.stream, line: jobLogs.line, ts: jobLogs.ts })
    .from(jobLogs)
    .where(and(eq(jobLogs.jobId, jobId), gt(jobLogs.seq, options.afterSeq)))
    .orderBy(asc(jobLogs.seq))
    .limit(options.limit);
}

export function jobJson(job: Job) {
  return {
    id: job.id,
    host_id: job.hostId,
    runner_host_id: job.runnerHostId,
    kind: job.kind,
    status: job.status,
    actor_kind: job.actorKind,
    actor_user_id: job.actorUserId,
    scheduled_id: job.scheduledId,
    source_group_id: job.sourceGroupId,
    params: job.params,
    progress: job.progress,
    summary: job.summary,
    exit_code: job.exitCode,
    error: job.error,
    created_at: job.createdAt,
    started_at: job.startedAt,
    finished_at: job.finishedAt,
    log_end_seq: job.logEndSeq,
  };
}
