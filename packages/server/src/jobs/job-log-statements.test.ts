/**
 * @module jobs/job-log-statements.test
 * How a backlog of log lines is cut into statements: full statements, each job's lines in order,
 * and a flooding job taking turns with the others rather than the whole statement.
 */
import { describe, expect, it } from "vitest";
import { chunksByJob, statements } from "./job-log-statements.js";

type Row = [jobId: string, line: string];

const rowsOf = (jobId: string, count: number): Row[] =>
  Array.from({ length: count }, (_, i) => [jobId, `${jobId}${i}`]);

/** Rows of several jobs, interleaved as lines of concurrent jobs arrive. */
function interleaved(counts: Record<string, number>): Row[] {
  const lists = Object.entries(counts).map(([jobId, count]) => rowsOf(jobId, count));
  const rows: Row[] = [];
  for (let i = 0; rows.length < lists.reduce((sum, list) => sum + list.length, 0); i += 1) {
    for (const list of lists) {
      const row = list[i];
      if (row) {
        rows.push(row);
      }
    }
  }
  return rows;
}

describe("statements", () => {
  it("fills a statement in turns of at most batchLines of each job, each job's lines in order", () => {
    const cut = [...statements(interleaved({ a: 10, b: 2 }), 4, 8)];
    expect(cut.map((rows) => rows.map((row) => row[1]))).toEqual([
      ["a0", "a1", "a2", "a3", "b0", "b1", "a4", "a5"],
      ["a6", "a7", "a8", "a9"],
    ]);
  });

  it("gives a job alone in the backlog full statements", () => {
    const cut = [...statements(rowsOf("a", 2_500), 200, 2_000)];
    expect(cut.map((rows) => rows.length)).toEqual([2_000, 500]);
    expect(cut.flat()).toEqual(rowsOf("a", 2_500));
  });

  it("a flooding job cannot keep the others out of a statement, and one left over goes first next", () => {
    const backlog = [...rowsOf("flood", 50), ...rowsOf("b", 3), ...rowsOf("c", 3)];
    const cut = [...statements(backlog, 4, 6)];
    // The first turn: four of the flood, then two of b fill the statement; c was left over.
    expect(cut[0]?.map((row) => row[1])).toEqual(["flood0", "flood1", "flood2", "flood3", "b0", "b1"]);
    expect(cut[1]?.map((row) => row[1])).toEqual(["c0", "c1", "c2", "flood4", "flood5", "flood6"]);
    for (const jobId of ["flood", "b", "c"]) {
      expect(cut.flat().filter((row) => row[0] === jobId)).toEqual(backlog.filter((row) => row[0] === jobId));
    }
    expect(cut.every((rows) => rows.length <= 6)).toBe(true);
  });
});

describe("chunksByJob", () => {
  it("cuts each job's rows in chunks, in order", () => {
    const chunks = chunksByJob(interleaved({ a: 5, b: 2 }), 2);
    expect(chunks.map((chunk) => [chunk.jobId, chunk.rows.map((row) => row[1])])).toEqual([
      ["a", ["a0", "a1"]],
      ["a", ["a2", "a3"]],
      ["a", ["a4"]],
      ["b", ["b0", "b1"]],
    ]);
  });
});
