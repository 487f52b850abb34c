/**
 * @module jobs/text-output
 * Output of restic commands that print text only (`prune` even with --json, `check`, `unlock`,
 * `copy`; recorded in testdata/restic). Every line goes to the job log, except the progress lines
 * restic prints about once a second even without a terminal (`[0:12] 45.00%  9 / 20 packs
 * processed`): those become throttled `job.progress` (percent only: their counts are packs,
 * snapshots or indexes, not files or bytes), and only a phase's final 100% line is logged, so an
 * hour-long check does not write thousands of log lines.
 */

import type { Repository } from "@fleetback/protocol";
import { createErrorCollector, type ErrorCollector } from "../restic/error-collector.js";
import type { ResticResult } from "../restic/restic.js";
import type { OutputLine } from "../restic/runner.js";
import type { JobRun } from "./job-types.js";
import { createProgressThrottle, type ProgressThrottle } from "./progress-throttle.js";
import type { RepositoryContext, RepositoryJobDeps } from "./repository-job.js";

const PROGRESS_LINE = /^\[(?:\d+:)?\d+:\d{2}\]\s+(\d+(?:\.\d+)?)%/;

/** The percentage (0..1) of a restic text progress line, or undefined for any other line. */
export function progressLinePercent(text: string): number | undefined {
  const match = PROGRESS_LINE.exec(text);
  if (match === null) {
    return undefined;
  }
  const percent = Number(match[1]) / 100;
  return Number.isFinite(percent) ? Math.min(Math.max(percent, 0), 1) : undefined;
}

export function createTextOutputHandler(
  run: JobRun,
  throttle: ProgressThrottle,
  errors: ErrorCollector,
): (line: OutputLine) => void {
  return (line) => {
    errors.observe(line.stream, line.text);
    if (line.stream === "stdout") {
      const percent = progressLinePercent(line.text);
      if (percent !== undefined) {
        throttle.push({ percent_done: percent, files_done: 0, bytes_done: 0 });
        if (percent < 1) {
          return;
        }
      }
    }
    run.log(line.stream, line.text);
  };
}

export interface TextToolRequest {
  subcommand: string;
  args?: readonly string[];
  /** Sees every line first (scrubbed), e.g. to spot a verdict in the text. */
  observe?: (line: OutputLine) => void;
  /** The source repository of `copy` and `init --copy-chunker-params` (the context's is the target). */
  fromRepository?: Repository;
  timeoutMs?: number;
  /** stdout is not logged (`cat config` prints the mirror's chunker polynomial, kept from the server). */
  quietStdout?: boolean;
}

export interface TextToolResult {
  result: ResticResult;
  /** The stderr text that best explains a failure. */
  error: string | undefined;
}

/** Runs a text-only restic command for the job: caps, cancel, log and progress as above. */
export async function runTextTool(
  deps: RepositoryJobDeps,
  run: JobRun,
  context: RepositoryContext,
  request: TextToolRequest,
): Promise<TextToolResult> {
  const throttle = createProgressThrottle(run.progress, deps.timers, deps.clock);
  const errors = createErrorCollector();
  const handle = createTextOutputHandler(run, throttle, errors);
  const result = await deps.restic.run({
    subcommand: request.subcommand,
    args: request.args,
    repository: context.repository,
    fromRepository: request.fromRepository,
    caps: context.caps,
    signal: run.signal,
    timeoutMs: request.timeoutMs,
    onLine: (line) => {
      request.observe?.(line);
      if (request.quietStdout !== true || line.stream !== "stdout") {
        handle(line);
      }
    },
  });
  throttle.flush();
  return { result, error: errors.best() };
}
