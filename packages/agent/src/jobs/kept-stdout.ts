/**
 * @module jobs/kept-stdout
 * The runs whose stdout is one JSON document read after restic ends (a snapshot list, a mirror's
 * list, raw-data stats): stdout is kept whole for that parse and never logged (a list of 10,000
 * snapshots is no log), while stderr goes to the job's log as the user would read it and to the
 * error collector that names the run's failure: the stderr every JSON-mode run of a job shares.
 */
import { renderStderrLine } from "@fleetback/protocol";
import { createErrorCollector, type ErrorCollector } from "../restic/error-collector.js";
import type { OutputLine } from "../restic/runner.js";
import type { JobRun } from "./job-types.js";

export interface KeptStdout {
  stdout: string[];
  errors: ErrorCollector;
  onLine: (line: OutputLine) => void;
}

/** Stderr to the job's log, worded, and to `errors`; stdout to `onStdout`. */
export function jsonRunLines(
  run: Pick<JobRun, "log">,
  errors: ErrorCollector,
  onStdout: (text: string) => void,
): (line: OutputLine) => void {
  return (line) => {
    if (line.stream === "stdout") {
      onStdout(line.text);
      return;
    }
    errors.observe("stderr", line.text);
    run.log("stderr", renderStderrLine(line.text));
  };
}

export function keepStdout(run: Pick<JobRun, "log">): KeptStdout {
  const stdout: string[] = [];
  const errors = createErrorCollector();
  return { stdout, errors, onLine: jsonRunLines(run, errors, (text) => stdout.push(text)) };
}
