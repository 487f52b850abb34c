/**
 * @module jobs/job-log-store
 * The job log writer's statements: who may stream a job's lines, where its seq continues, and one
 * batch of lines into `job_logs`. Each waits out a database outage (retryWhileDatabaseDown) and
 * says so in the log; what outlasts it is the writer's to report.
 */
import {
  type Database,
  executeRows,
  insertTextRows,
  isConnectionError,
  jobLogs,
  jobs,
  type TextColumn,
  withoutTriggers,
} from "@fleetback/db";
import { eq, getTableName, max, sql } from "drizzle-orm";
import { retryWhileDatabaseDown } from "../database-retry.js";
import type { Logger } from "../log.js";

const TABLE = getTableName(jobLogs);
const COLUMNS: readonly TextColumn[] = [
  { name: "job_id", type: "text" },
  { name: "seq", type: "integer" },
  { name: "stream", type: "text" },
  { name: "line", type: "text" },
  { name: "ts", type: "timestamptz" },
];
/** A row as insertTextRows takes it, in COLUMNS' order. */
export type LogRow = [jobId: string, seq: string, stream: string, line: string, ts: string];

export interface JobLogStore {
  /** The host whose agent runs the job (a keeper's, for a kept job); undefined for no such job. */
  runnerOf(jobId: string): Promise<string | undefined>;
  /** The seq after the highest stored for the job (a restart continues from the database). */
  nextSeq(jobId: string): Promise<number>;
  /** Writes one batch; never throws (lines that cannot be stored are logged as lost). */
  store(rows: LogRow[]): Promise<void>;
}

export function createJobLogStore(db: Database, log: Logger): JobLogStore {
  /**
   * One statement, in a transaction that holds its jobs' rows (FOR KEY SHARE) so that the foreign
   * key's check of each line can be skipped (withoutTriggers: on PostgreSQL it was more than half
   * of a 2,000-line INSERT, issue 19, B3). Lines of a job deleted since its owner check are
   * dropped here, as the check would have refused them. Throws what outlasts an outage.
   */
  async function insert(rows: LogRow[], what: { jobs: number } | { job_id: string }): Promise<void> {
    const dropped = await retryWhileDatabaseDown(
      () =>
        db.transaction(async (tx) => {
          const ids = [...new Set(rows.map((row) => row[0]))];
          const held = await executeRows<{ id: string }>(
            tx,
            sql`select ${jobs.id} as id from ${jobs} where ${jobs.id} = any(${sql.param(ids)}::text[]) for key share`,
          );
          const present = new Set(held.map((row) => row.id));
          const kept = present.size === ids.length ? rows : rows.filter((row) => present.has(row[0]));
          await withoutTriggers(tx, () => insertTextRows(tx, TABLE, COLUMNS, kept));
          return ids.filter((id) => !present.has(id));
        }),
      {
        onRetry: (err, attempt, delayMs) => {
          log.warn(
            { err, ...what, lines: rows.length, attempt, delay_ms: delayMs },
            "database unavailable; retrying job log lines",
          );
        },
      },
    );
    if (dropped.length > 0) {
      log.warn({ job_ids: dropped }, "log lines of jobs deleted meanwhile; dropped");
    }
  }

  return {
    async runnerOf(jobId) {
      const [job] = await retryWhileDatabaseDown(
        () =>
          db
            .select({ hostId: jobs.hostId, runnerHostId: jobs.runnerHostId })
            .from(jobs)
            .where(eq(jobs.id, jobId)),
        {
          onRetry: (err, attempt, delayMs) => {
            log.warn(
              { err, job_id: jobId, attempt, delay_ms: delayMs },
              "database unavailable; retrying a job's log",
            );
          },
        },
      );
      // A keeper's kept job (keepers/) streams from the keeper's agent, never from the job's host.
      return job === undefined ? undefined : (job.runnerHostId ?? job.hostId);
    },
    async nextSeq(jobId) {
      const [row] = await retryWhileDatabaseDown(() =>
        db
          .select({ last: max(jobLogs.seq) })
          .from(jobLogs)
          .where(eq(jobLogs.jobId, jobId)),
      );
      return (row?.last ?? 0) + 1;
    },
    async store(rows) {
      const byJob = new Map<string, LogRow[]>();
      for (const row of rows) {
        const its = byJob.get(row[0]);
        if (its) {
          its.push(row);
        } else {
          byJob.set(row[0], [row]);
        }
      }
      try {
        await insert(rows, { jobs: byJob.size });
        return;
      } catch (err) {
        if (byJob.size === 1 || isConnectionError(err)) {
          log.error(
            { err, jobs: byJob.size, lines: rows.length },
            "storing job log lines failed; they are lost",
          );
          return;
        }
        log.warn(
          { err, jobs: byJob.size, lines: rows.length },
          "a batch of job log lines failed; storing it job by job",
        );
      }
      for (const [jobId, its] of byJob) {
        try {
          await insert(its, { job_id: jobId });
        } catch (err) {
          log.error({ err, job_id: jobId, lines: its.length }, "storing job log lines failed; they are lost");
        }
      }
    },
  };
}
