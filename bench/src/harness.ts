/**
 * @module harness
 * A tiny benchmark harness: each case runs a subject and a baseline in the same process, in
 * alternating rounds so machine noise hits both alike, and reports the ratio. Absolute numbers
 * vary between machines; the ratio against a baseline measured in the same run is what we track.
 */

export interface BenchCase {
  name: string;
  /** What the subject is compared with, e.g. "JSON.parse alone". */
  baselineName: string;
  subject: () => void;
  baseline: () => void;
  /** Operations per round; rounds are timed whole. */
  batch: number;
}

export interface BenchResult {
  name: string;
  baselineName: string;
  subjectNsPerOp: number;
  baselineNsPerOp: number;
  /** subject time / baseline time: 1.0 = as fast as the baseline, 2.0 = twice as slow. */
  ratio: number;
}

function timeBatch(fn: () => void, batch: number): number {
  const start = process.hrtime.bigint();
  for (let i = 0; i < batch; i++) {
    fn();
  }
  return Number(process.hrtime.bigint() - start) / batch;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

export function runCase(bench: BenchCase, rounds = 15): BenchResult {
  // Warm up both so the JIT and lazy schema compilation are out of the measurement.
  timeBatch(bench.subject, bench.batch);
  timeBatch(bench.baseline, bench.batch);
  const subject: number[] = [];
  const baseline: number[] = [];
  for (let round = 0; round < rounds; round++) {
    subject.push(timeBatch(bench.subject, bench.batch));
    baseline.push(timeBatch(bench.baseline, bench.batch));
  }
  const subjectNsPerOp = median(subject);
  const baselineNsPerOp = median(baseline);
  return {
    name: bench.name,
    baselineName: bench.baselineName,
    subjectNsPerOp,
    baselineNsPerOp,
    ratio: subjectNsPerOp / baselineNsPerOp,
  };
}

/** Microseconds for in-process work, milliseconds for requests over a socket. */
function duration(ns: number): string {
  return ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : `${(ns / 1000).toFixed(2)} µs`;
}

export function formatResults(results: BenchResult[]): string {
  const rows = results.map((r) => [
    r.name,
    duration(r.subjectNsPerOp),
    r.baselineName,
    duration(r.baselineNsPerOp),
    `${r.ratio.toFixed(2)}×`,
  ]);
  const header = ["case", "per op", "baseline", "baseline per op", "ratio"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? "").length)));
  const line = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join("  ");
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}
