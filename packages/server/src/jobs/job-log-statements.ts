/**
 * @module jobs/job-log-statements
 * How the job log writer cuts a backlog of lines into statements, so that one flooding job cannot
 * fill every statement while the other jobs' lines wait (see job-log-writer.ts).
 */

/**
 * Splits a backlog into statements of at most `batchLines` lines of each job and
 * `statementLines` in all, each job's lines in order; a job left over goes behind the others.
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
  while (queue.length > 0) {
    const rows: Row[] = [];
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
    yield rows;
    queue = [...skipped, ...served];
  }
}
