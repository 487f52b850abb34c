/**
 * @module jobs/job-log-statements
 * How the job log writer cuts a backlog of lines into statements, so that one flooding job cannot
 * fill every statement while the other jobs' lines wait (see job-log-writer.ts).
 */

/**
 * Splits a backlog into statements of at most `statementLines` lines, each job's lines in order.
 * A statement takes at most `batchLines` lines of each job in turn, then another turn while room is
 * left: a job left over goes behind the others, and a backlog held by a few jobs still goes in full
 * statements (issue 40, B3: at the end of a storm, when a job or two had lines left, it went 200
 * lines a statement, over three times the statements the lines needed).
 */
export function* statements<Row extends readonly [string, ...string[]]>(
  backlog: Row[],
  batchLines: number,
  statementLines: number,
): Generator<Row[]> {
  const byJob = new Map<string, { rows: Row[]; next: number }>();
  for (const row of backlog) {
    const its = byJob.get(row[0]);
    if (its) {
      its.rows.push(row);
    } else {
      byJob.set(row[0], { rows: [row], next: 0 });
    }
  }
  let queue = [...byJob.values()];
  let rows: Row[] = [];
  while (queue.length > 0) {
    const skipped: typeof queue = [];
    const served: typeof queue = [];
    for (const job of queue) {
      const end = Math.min(job.rows.length, job.next + batchLines, job.next + statementLines - rows.length);
      if (end <= job.next) {
        skipped.push(job);
        continue;
      }
      for (let i = job.next; i < end; i++) {
        rows.push(job.rows[i] as Row);
      }
      job.next = end;
      if (end < job.rows.length) {
        served.push(job);
      }
    }
    queue = [...skipped, ...served];
    if (rows.length >= statementLines || queue.length === 0) {
      yield rows;
      rows = [];
    }
  }
}

/** A statement's rows by job, each job's cut in chunks of at most `chunkLines`, in order. */
export function chunksByJob<Row extends readonly [string, ...string[]]>(
  rows: readonly Row[],
  chunkLines: number,
): Array<{ jobId: string; rows: Row[] }> {
  const byJob = new Map<string, Row[]>();
  for (const row of rows) {
    const its = byJob.get(row[0]);
    if (its) {
      its.push(row);
    } else {
      byJob.set(row[0], [row]);
    }
  }
  const chunks: Array<{ jobId: string; rows: Row[] }> = [];
  for (const [jobId, its] of byJob) {
    for (let i = 0; i < its.length; i += chunkLines) {
      chunks.push({ jobId, rows: its.slice(i, i + chunkLines) });
    }
  }
  return chunks;
}
