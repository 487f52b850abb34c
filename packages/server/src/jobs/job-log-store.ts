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
} from "@fleetback/db";
import { eq, getTableName, sql } from "drizzle-orm";
import { retryWhileDatabaseDown } from "../database-retry.js";
import type { Logger } from "../log.js";
import { chunksByJob } from "./job-log-statements.js";

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
  /**
   * The host whose agent runs the job (a keeper's, for a kept job; undefined for no such job) and
   * the seq after the highest stored for it (a restart continues from the database), in one query.
   */
  runnerAndNextSeq(jobId: string): Promise<{ runner: string | undefined; nextSeq: number }>;
  /**
   * Writes one batch; never throws (lines that cannot be stored are logged as lost). A batch a bad
   * row fails is written again in chunks of at most `chunkLines` of one job: only its chunk is lost.
   */
  store(rows: LogRow[]): Promise<void>;
}

export function createJobLogStore(db: Database, log: Logger, chunkLines: number): JobLogStore {
  /**
   * One statement, in a transaction that holds its jobs' rows (FOR KEY SHARE) so that the foreign
   * key's check of each line can be skipped (as @fleetback/db's withoutTriggers does: on PostgreSQL
   * it was more than half of a 2,000-line INSERT, issue 19, B3). Lines of a job deleted since its
   * owner check are dropped here, as the check would have refused them. Throws what outlasts an
   * outage.
   */
  async function insert(rows: LogRow[], jobId?: string): Promise<void> {
    const unique = new Set<string>();
    for (const row of rows) {
      unique.add(row[0]);
    }
    const ids = [...unique];
    const what = jobId === undefined ? { jobs: ids.length } : { job_id: jobId };
    const dropped = await retryWhileDatabaseDown(
      () =>
        db.transaction(async (tx) => {
          // The lock and withoutTriggers' setting in one statement (issue 40, B3: three fewer per
          // write). Left set to the end of the transaction, which ends with the insert; a role
          // that is no superuser keeps its checks, as withoutTriggers does.
          const held = await executeRows<{ id: string }>(
            tx,
            sql`select ${jobs.id} as id,
                  case when current_setting('is_superuser') = 'on'
                    then set_config('session_replication_role', 'replica', true) end as role
                from ${jobs} where ${jobs.id} = any(${sql.param(ids)}::text[]) for key share`,
          );
          const present = new Set(held.map((row) => row.id));
          const kept = present.size === ids.length ? rows : rows.filter((row) => present.has(row[0]));
          await insertTextRows(tx, TABLE, COLUMNS, kept);
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
    async runnerAndNextSeq(jobId) {
      const [job] = await retryWhileDatabaseDown(
        () =>
          db
            .select({
              hostId: jobs.hostId,
              runnerHostId: jobs.runnerHostId,
              // Qualified by hand: drizzle writes a single table's columns unqualified.
              last: sql<number | null>`(select max(l.seq) from ${jobLogs} as l where l.job_id = ${jobs}.id)`,
            })
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
      return job === undefined
        ? { runner: undefined, nextSeq: 1 }
        : { runner: job.runnerHostId ?? job.hostId, nextSeq: Number(job.last ?? 0) + 1 };
    },
    async store(rows) {
      let chunks: Array<{ jobId: string; rows: LogRow[] }>;
      try {
        await insert(rows);
        return;
      } catch (err) {
        chunks = chunksByJob(rows, chunkLines);
        if (chunks.length === 1 || isConnectionError(err)) {
          log.error(
            { err, chunks: chunks.length, lines: rows.length },
            "storing job log lines failed; they are lost",
          );
          return;
        }
        log.warn(
          { err, chunks: chunks.length, lines: rows.length },
          "a batch of job log lines failed; storing it job by job",
        );
      }
      for (const chunk of chunks) {
        try {
          await insert(chunk.rows, chunk.jobId);
        } catch (err) {
          log.error(
            { err, job_id: chunk.jobId, lines: chunk.rows.length },
            "storing job log lines failed; they are lost",
          );
        }
      }
    },
  };
}
