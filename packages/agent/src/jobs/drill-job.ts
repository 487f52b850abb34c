/**
 * @module jobs/drill-job
 * `drill` (protocol 6): proves that files can be read back from the repository.
 *
 * 1. `restic ls --no-lock --json <snapshot>`, streamed: a uniform random sample of at most
 *    `sample_files` regular files (drill-sample.ts); the listing itself is never held or logged.
 *    0.14 exits 0 for an unknown snapshot, so a listing without its snapshot line fails here.
 * 2. `restic restore <snapshot> --target <scratch> --verify --include <escaped path>...` in text
 *    mode on every version: `--verify` re-reads each restored file and checks it against the
 *    snapshot's blob hashes; a pack that does not decrypt fails the restore itself. `--include`
 *    takes one escaped pattern per file (restic/literal-pattern.ts): `--include-file` exists only
 *    from 0.17, and the sample is bounded (DRILL_MAX_SAMPLE_FILES) so argv stays small.
 * 3. Each restored file's size against the listing (drill-compare.ts).
 *
 * The scratch directory is `<state dir>/drill/<job id>`: inside the agent's own state, which
 * operator restores may never write to; a drill writes there on purpose, restores only into a
 * directory it has just created empty, and deletes it in a `finally`, also after a failure or a
 * cancel. A drill needs no restore helper: the agent owns its state dir. A sample larger than the
 * free space there is refused before anything is restored.
 */
import { mkdir, rm, statfs } from "node:fs/promises";
import { join } from "node:path";
import {
  type CommandRunDrill,
  DRILL_MAX_SAMPLE_FILES,
  type DrillSummary,
  SNAPSHOT_ID_PATTERN,
} from "@fleetback/protocol";
import { createErrorCollector } from "../restic/error-collector.js";
import { literalPattern } from "../restic/literal-pattern.js";
import { parseLsLine } from "../tree/ls-output.js";
import { compareRestored, mismatchError } from "./drill-compare.js";
import { createFileSample, type SampledFile } from "./drill-sample.js";
import { failed, type JobHandler, type JobOutcome, type JobRun } from "./job-types.js";
import { jsonRunLines } from "./kept-stdout.js";
import { createProgressThrottle } from "./progress-throttle.js";
import { type RepositoryContext, type RepositoryJobDeps, runRepositoryJob } from "./repository-job.js";
import { runTextTool } from "./text-output.js";
import { toolOutcome } from "./tool-outcome.js";

export const DRILL_DIR_NAME = "drill";

const FILE_ERROR_PREFIX = "ignoring error for ";

/** Listing a snapshot of millions of files takes minutes (testdata/restic perf: ~3 s per 200,000). */
export const DRILL_LIST_TIMEOUT_MS = 30 * 60_000;

/** Free space the drill leaves untouched on the state dir's file system, beyond the sample. */
export const DRILL_FREE_SPACE_MARGIN_BYTES = 256 * 1024 * 1024;

export interface DrillJobDeps extends RepositoryJobDeps {
  /** The agent's state dir; scratch directories live in `<stateDir>/drill/`. */
  stateDir: string;
  /** [0, 1) like Math.random, which is the default; tests pin the draw. */
  random?: () => number;
  /** Bytes available to the agent on the state dir's file system; default statfs. */
  freeBytes?: (dir: string) => Promise<number>;
}

export function drillScratchDir(stateDir: string, jobId: string): string {
  return join(stateDir, DRILL_DIR_NAME, jobId);
}

export function drillRestoreArgs(
  snapshotId: string,
  scratch: string,
  sample: readonly SampledFile[],
): string[] {
  return [
    snapshotId,
    "--target",
    scratch,
    "--verify",
    ...sample.flatMap((file) => ["--include", literalPattern(file.path)]),
  ];
}

const defaultFreeBytes = async (dir: string) => {
  const stats = await statfs(dir);
  return stats.bavail * stats.bsize;
};

function message(cause: unknown): string {
  return cause instanceof Error ? cause.message : String(cause);
}

type Listing =
  | { ok: true; sample: SampledFile[]; filesInSnapshot: number }
  | { ok: false; outcome: JobOutcome };

async function listSample(
  deps: DrillJobDeps,
  run: JobRun<CommandRunDrill>,
  context: RepositoryContext,
): Promise<Listing> {
  const { snapshot_id: snapshotId, sample_files: sampleFiles } = run.command.drill;
  const sample = createFileSample(sampleFiles, deps.random ?? Math.random);
  const errors = createErrorCollector();
  let sawSnapshot = false;
  const result = await deps.restic.run({
    subcommand: "ls",
    args: ["--no-lock", snapshotId],
    repository: context.repository,
    caps: context.caps,
    json: true,
    signal: run.signal,
    timeoutMs: DRILL_LIST_TIMEOUT_MS,
    onLine: jsonRunLines(run, errors, (text) => {
      const parsed = parseLsLine(text);
      if (parsed.kind === "snapshot") {
        sawSnapshot = true;
      } else if (parsed.kind === "node" && parsed.entry.type === "file") {
        sample.offer({ path: parsed.entry.path, size: parsed.entry.size });
      }
    }),
  });
  const outcome = toolOutcome(result, deps.restic.command, errors.best());
  if (outcome.status !== "succeeded") {
    const error =
      outcome.error === undefined ? undefined : `listing snapshot ${snapshotId} failed: ${outcome.error}`;
    return { ok: false, outcome: error === undefined ? outcome : { ...outcome, error } };
  }
  if (!sawSnapshot) {
    const error = `snapshot ${snapshotId} is not in the repository`;
    run.log("agent", `${error}; nothing was restored`);
    return { ok: false, outcome: failed(error, outcome.exit_code) };
  }
  return { ok: true, sample: sample.files(), filesInSnapshot: sample.seen };
}

async function restoreAndCompare(
  deps: DrillJobDeps,
  run: JobRun<CommandRunDrill>,
  context: RepositoryContext,
  listing: { sample: SampledFile[]; filesInSnapshot: number },
): Promise<JobOutcome> {
  const { snapshot_id: snapshotId } = run.command.drill;
  const { sample, filesInSnapshot } = listing;
  const summary: DrillSummary = {
    snapshot_id: snapshotId,
    files_in_snapshot: filesInSnapshot,
    files_checked: 0,
    bytes_checked: 0,
    mismatch_count: 0,
    mismatches: [],
  };
  if (sample.length === 0) {
    run.log("agent", `snapshot ${snapshotId} holds no regular files; there is nothing to restore`);
    return { status: "succeeded", exit_code: 0, summary };
  }
  const bytes = sample.reduce((total, file) => total + file.size, 0);
  const scratch = drillScratchDir(deps.stateDir, run.command.job_id);
  try {
    // Jobs run one at a time (job-queue.ts), so anything under drill/ now is left over from an
    // agent killed mid-drill: cleared, so no restored copy outlives its drill for long and restic
    // writes into an empty directory of ours, never over anything already there.
    await rm(join(deps.stateDir, DRILL_DIR_NAME), { recursive: true, force: true });
    await mkdir(scratch, { recursive: true, mode: 0o700 });
  } catch (cause) {
    const error = `cannot create the drill directory ${scratch}: ${message(cause)}`;
    run.log("agent", `${error}; nothing was restored`);
    return { ...failed(error), summary };
  }
  let outcome: JobOutcome;
  try {
    outcome = await restoreInto(deps, run, context, scratch, sample, bytes, summary);
  } finally {
    try {
      await rm(scratch, { recursive: true, force: true });
      run.log("agent", `deleted the drill directory ${scratch}`);
    } catch (cause) {
      const error = `cannot delete the drill directory ${scratch}: ${message(cause)}`;
      run.log("agent", error);
      // Left-over restored data is worth a failed job: it takes space and holds backed-up files.
      outcome = { ...failed(error), summary };
    }
  }
  return outcome;
}

async function restoreInto(
  deps: DrillJobDeps,
  run: JobRun<CommandRunDrill>,
  context: RepositoryContext,
  scratch: string,
  sample: SampledFile[],
  bytes: number,
  summary: DrillSummary,
): Promise<JobOutcome> {
  const { snapshot_id: snapshotId } = run.command.drill;
  let free: number;
  try {
    free = await (deps.freeBytes ?? defaultFreeBytes)(scratch);
  } catch (cause) {
    const error = `cannot tell the free space of ${scratch}: ${message(cause)}`;
    run.log("agent", `${error}; nothing was restored`);
    return { ...failed(error), summary };
  }
  if (bytes + DRILL_FREE_SPACE_MARGIN_BYTES > free) {
    const error = `the sample of ${sample.length} files holds ${bytes} bytes, more than the ${free} bytes free in ${scratch} (keeping ${DRILL_FREE_SPACE_MARGIN_BYTES} spare); nothing was restored`;
    run.log("agent", error);
    return { ...failed(error), summary };
  }
  run.log(
    "agent",
    `restoring ${sample.length} of ${summary.files_in_snapshot} files (${bytes} bytes) of snapshot ${snapshotId} into ${scratch} and verifying them`,
  );
  const throttle = createProgressThrottle(run.progress, deps.timers, deps.clock);
  throttle.push({
    percent_done: 0,
    files_done: 0,
    files_total: sample.length,
    bytes_done: 0,
    bytes_total: bytes,
  });
  // restic ends with "Fatal: There were N errors"; the file and cause are in the first of its
  // "ignoring error for <path>: <cause>" lines (0.14 and 0.18 alike), worth carrying in the error.
  let firstFileError: string | undefined;
  const { result, error } = await runTextTool(deps, run, context, {
    subcommand: "restore",
    args: drillRestoreArgs(snapshotId, scratch, sample),
    observe: (line) => {
      if (
        line.stream === "stderr" &&
        firstFileError === undefined &&
        line.text.startsWith(FILE_ERROR_PREFIX)
      ) {
        firstFileError = line.text.slice(FILE_ERROR_PREFIX.length);
      }
    },
  });
  throttle.flush();
  const restored = toolOutcome(result, deps.restic.command, error);
  if (restored.status === "cancelled") {
    return { ...restored, summary };
  }
  const comparison = await compareRestored(scratch, sample);
  Object.assign(summary, {
    files_checked: sample.length,
    bytes_checked: comparison.bytesMatched,
    mismatch_count: comparison.mismatchCount,
    mismatches: comparison.mismatches,
  });
  if (restored.status === "failed") {
    const fatal = restored.error ?? "restic failed";
    const reason = firstFileError === undefined ? fatal : `${fatal} (first: ${firstFileError})`;
    run.log("agent", `the drill failed: restic could not restore and verify the sample (${reason})`);
    return { ...restored, error: `restic could not restore and verify the sample: ${reason}`, summary };
  }
  if (comparison.mismatchCount > 0) {
    const failure = mismatchError(comparison, sample.length);
    run.log("agent", `the drill failed: ${failure}`);
    return { status: "failed", exit_code: restored.exit_code, error: failure, summary };
  }
  throttle.push({
    percent_done: 1,
    files_done: sample.length,
    files_total: sample.length,
    bytes_done: bytes,
    bytes_total: bytes,
  });
  throttle.flush();
  run.log("agent", `the drill passed: ${sample.length} files, ${bytes} bytes restored and verified`);
  return { ...restored, summary };
}

const SNAPSHOT_ID = new RegExp(SNAPSHOT_ID_PATTERN);

export function createDrillJob(deps: DrillJobDeps): JobHandler<CommandRunDrill> {
  return async (run) => {
    const { snapshot_id: snapshotId, sample_files: sampleFiles } = run.command.drill;
    if (!SNAPSHOT_ID.test(snapshotId)) {
      const error = `invalid snapshot id ${JSON.stringify(snapshotId)}; restic was not run`;
      run.log("agent", error);
      return failed(error);
    }
    if (!Number.isInteger(sampleFiles) || sampleFiles < 1 || sampleFiles > DRILL_MAX_SAMPLE_FILES) {
      const error = `sample_files must be 1 to ${DRILL_MAX_SAMPLE_FILES}, not ${sampleFiles}; restic was not run`;
      run.log("agent", error);
      return failed(error);
    }
    return runRepositoryJob(deps, run, {
      async tool(context) {
        const listing = await listSample(deps, run, context);
        if (!listing.ok) {
          return listing.outcome;
        }
        return restoreAndCompare(deps, run, context, listing);
      },
    });
  };
}
