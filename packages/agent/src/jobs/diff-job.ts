/**
 * @module jobs/diff-job
 * `diff`: pre hook, `restic --json diff <snapshot_a> <snapshot_b>`, post hook. 0.14 and 0.18
 * print the same JSON (testdata/restic `diff`): one `change` line per path, then one `statistics` line.
 * Every stdout line goes to the job log exactly as restic printed it, so the server can render a
 * table from the log by parsing lines that start with `{` (shapes in the package README); a
 * line that is not JSON (a future tool without --json for diff) is forwarded unchanged too.
 * The statistics, plus the agent's count of change lines by kind, become `job.finished.summary`.
 */
import type { CommandRunDiff, JobSummary } from "@fleetback/protocol";
import { parseJsonObject } from "../restic/backup-output.js";
import { createErrorCollector } from "../restic/error-collector.js";
import type { JobHandler } from "./job-types.js";
import { jsonRunLines } from "./kept-stdout.js";
import { type RepositoryJobDeps, runRepositoryJob } from "./repository-job.js";
import { toolOutcome } from "./tool-outcome.js";

export interface ChangeCounts {
  added: number;
  removed: number;
  modified: number;
  /** Type or metadata changes without content change (`T`, `U`, ...). */
  other: number;
}

export type DiffLine =
  | { kind: "change"; path: string; modifier: string }
  | { kind: "statistics"; statistics: JobSummary }
  | { kind: "other" };

export function parseDiffLine(text: string): DiffLine {
  const parsed = parseJsonObject(text);
  if (parsed === undefined) {
    return { kind: "other" };
  }
  if (
    parsed.message_type === "change" &&
    typeof parsed.path === "string" &&
    typeof parsed.modifier === "string"
  ) {
    return { kind: "change", path: parsed.path, modifier: parsed.modifier };
  }
  if (parsed.message_type === "statistics") {
    const { message_type: _type, ...statistics } = parsed;
    return { kind: "statistics", statistics };
  }
  return { kind: "other" };
}

export function countChange(counts: ChangeCounts, modifier: string): void {
  if (modifier.includes("+")) {
    counts.added += 1;
  } else if (modifier.includes("-")) {
    counts.removed += 1;
  } else if (modifier.includes("M")) {
    counts.modified += 1;
  } else {
    counts.other += 1;
  }
}

export function diffArgs(command: CommandRunDiff): string[] {
  return [command.diff.snapshot_a, command.diff.snapshot_b];
}

export function createDiffJob(deps: RepositoryJobDeps): JobHandler<CommandRunDiff> {
  return (run) =>
    runRepositoryJob(deps, run, {
      async tool({ repository, caps }) {
        const errors = createErrorCollector();
        const changes: ChangeCounts = { added: 0, removed: 0, modified: 0, other: 0 };
        let statistics: JobSummary | undefined;
        const result = await deps.restic.run({
          subcommand: "diff",
          args: diffArgs(run.command),
          repository,
          caps,
          json: true,
          signal: run.signal,
          onLine: jsonRunLines(run, errors, (text) => {
            const parsed = parseDiffLine(text);
            if (parsed.kind === "change") {
              countChange(changes, parsed.modifier);
            } else if (parsed.kind === "statistics") {
              statistics = parsed.statistics;
            }
            run.log("stdout", text);
          }),
        });
        const outcome = toolOutcome(result, deps.restic.command, errors.best());
        if (outcome.status !== "succeeded") {
          return outcome;
        }
        return { ...outcome, summary: { ...(statistics ?? {}), changes: { ...changes } } };
      },
    });
}
