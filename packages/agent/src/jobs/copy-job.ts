/**
 * @module jobs/copy-job
 * `copy` (protocol 8): a second copy of the host's snapshots in its mirror repository.
 *
 * restic opens the MIRROR (the `mirror` slot) as its repository and the `repo` slot's repository
 * as the source, through RESTIC_FROM_REPOSITORY / RESTIC_FROM_PASSWORD (both read by 0.14 and
 * 0.18; restic/restic.ts merges and scrubs them like the main ones). Never argv.
 *
 * 1. `restic cat config` on the mirror (its stdout, the mirror's chunker polynomial, is not
 *    logged), bounded by MIRROR_PROBE_TIMEOUT_MS: restic 0.18 retries a server it cannot reach
 *    for minutes, and a mirror that is down should fail the copy soon and say so. A mirror that
 *    does not exist yet (checked with the real binaries):
 *    - 0.18 exits 10, "Fatal: repository does not exist: unable to open config file: ...";
 *    - 0.14 exits 1, "Fatal: unable to open config file: <config/> does not exist" (rest) or
 *      "...: stat <path>/config: no such file or directory" (local).
 *    Both then print "Is there a repository at the following location?", and 0.14 prints that
 *    (exit 1) for a refused connection too, so only the "does not exist" text counts. A missing
 *    mirror is created with `restic init --copy-chunker-params`, so that a chunk stored in both
 *    repositories is deduplicated the same way in each (same chunker polynomial on 0.14 and 0.18).
 * 2. `restic copy <id>...`: restic skips snapshots the mirror already holds a copy of.
 * 3. `restic snapshots --json` on the mirror: a copy gets an id of its own and records its source
 *    snapshot's id as `original` (0.14 and 0.18 alike), which is how the summary tells which
 *    requested snapshots the mirror holds (a mirror snapshot's own id also counts, should a copy
 *    ever keep its id). A copy that leaves one of them out fails.
 */
import {
  COPY_SNAPSHOTS_MAX,
  type CommandRunCopy,
  type CopySummary,
  type Repository,
} from "@fleetback/protocol";
import { isObject, parseJsonArray } from "../restic/backup-output.js";
import { REPOSITORY_UNREACHABLE_MS } from "../restic/unreachable-watch.js";
import { failed, type JobHandler, type JobOutcome, type JobRun } from "./job-types.js";
import { keepStdout } from "./kept-stdout.js";
import { type RepositoryContext, type RepositoryJobDeps, runRepositoryJob } from "./repository-job.js";
import { SNAPSHOTS_MAX_LINE_LENGTH, SNAPSHOTS_TIMEOUT_MS } from "./snapshot-listing.js";
import { runTextTool, type TextToolRequest } from "./text-output.js";
import { toolOutcome } from "./tool-outcome.js";

export const NO_MIRROR_CREDENTIALS_ERROR = "no mirror credentials";

/** 0.14's error for a repository that is not there (rest, then local); exit status 1. */
const NO_REPOSITORY_ERROR = /unable to open config file: .*(does not exist|no such file or directory)/;

/**
 * How long opening the mirror may take before the copy fails as "not answering": by default as
 * long as the repository may stay unreachable (restic/unreachable-watch.ts), for a mirror is a
 * repository on a link of its own.
 */
export const MIRROR_PROBE_TIMEOUT_MS = REPOSITORY_UNREACHABLE_MS;

/** restic 0.18's exit status for "repository does not exist". */
const EXIT_NO_REPOSITORY = 10;

export interface CopyJobDeps extends RepositoryJobDeps {
  /**
   * Default MIRROR_PROBE_TIMEOUT_MS; FLEETBACK_REPOSITORY_UNREACHABLE_AFTER sets it. null: no
   * bound, restic's own retries decide, as `off` leaves an unreachable repository's job running.
   */
  mirrorProbeTimeoutMs?: number | null;
}

interface MirrorRun {
  run: JobRun<CommandRunCopy>;
  context: RepositoryContext;
  mirror: Repository;
}

/** One text-mode restic run against the mirror with the repository as source; its lines logged. */
async function runOnMirror(
  deps: RepositoryJobDeps,
  { run, context, mirror }: MirrorRun,
  request: Omit<TextToolRequest, "fromRepository">,
) {
  const { result, error } = await runTextTool(
    deps,
    run,
    { ...context, repository: mirror },
    { ...request, fromRepository: context.repository },
  );
  return { result, outcome: toolOutcome(result, deps.restic.command, error) };
}

type Probe = { exists: boolean } | { outcome: JobOutcome };

async function probeMirror(deps: CopyJobDeps, mirrorRun: MirrorRun): Promise<Probe> {
  const timeoutMs =
    deps.mirrorProbeTimeoutMs === undefined
      ? MIRROR_PROBE_TIMEOUT_MS
      : (deps.mirrorProbeTimeoutMs ?? undefined);
  let absent = false;
  const { result, outcome } = await runOnMirror(deps, mirrorRun, {
    subcommand: "cat",
    args: ["config"],
    observe: (line) => {
      absent ||= line.stream === "stderr" && NO_REPOSITORY_ERROR.test(line.text);
    },
    timeoutMs,
    quietStdout: true,
  });
  if (outcome.status === "succeeded") {
    return { exists: true };
  }
  if (result.kind === "exited" && result.timedOut && !result.cancelled && timeoutMs !== undefined) {
    const error = `the mirror did not answer within ${timeoutMs / 1000} s`;
    mirrorRun.run.log("agent", `${error}; nothing was copied`);
    return { outcome: failed(error, result.exitCode) };
  }
  const missing =
    result.kind === "exited" &&
    !result.cancelled &&
    (result.exitCode === EXIT_NO_REPOSITORY || (result.exitCode === 1 && absent));
  return missing ? { exists: false } : { outcome: withContext(outcome, "the mirror cannot be opened") };
}

function withContext(outcome: JobOutcome, what: string): JobOutcome {
  return outcome.status === "failed"
    ? { ...outcome, error: `${what}: ${outcome.error ?? "restic failed"}` }
    : outcome;
}

interface MirrorListing {
  count: number;
  latest: string | null;
  /** Source snapshot ids the mirror holds a copy of (`original`), and its own ids. */
  held: Set<string>;
}

function parseMirrorListing(stdout: string): MirrorListing | undefined {
  const parsed = parseJsonArray(stdout);
  if (parsed === undefined) {
    return undefined;
  }
  const held = new Set<string>();
  let latest: number | undefined;
  for (const entry of parsed) {
    if (!isObject(entry) || typeof entry.id !== "string") {
      return undefined;
    }
    held.add(entry.id);
    if (typeof entry.original === "string") {
      held.add(entry.original);
    }
    const time = typeof entry.time === "string" ? Date.parse(entry.time) : Number.NaN;
    if (!Number.isNaN(time) && (latest === undefined || time > latest)) {
      latest = time;
    }
  }
  return { count: parsed.length, latest: latest === undefined ? null : new Date(latest).toISOString(), held };
}

async function listMirror(
  deps: RepositoryJobDeps,
  { run, context, mirror }: MirrorRun,
): Promise<MirrorListing | { outcome: JobOutcome }> {
  const kept = keepStdout(run);
  const { stdout, errors } = kept;
  const result = await deps.restic.run({
    subcommand: "snapshots",
    repository: mirror,
    caps: context.caps,
    json: true,
    signal: run.signal,
    timeoutMs: SNAPSHOTS_TIMEOUT_MS,
    maxLineLength: SNAPSHOTS_MAX_LINE_LENGTH,
    onLine: kept.onLine,
  });
  const outcome = toolOutcome(result, deps.restic.command, errors.best());
  if (outcome.status !== "succeeded") {
    // A cancel while listing is the job's cancel, not a failed listing.
    return { outcome: withContext(outcome, "listing the mirror failed") };
  }
  const listing = parseMirrorListing(stdout.join("\n"));
  if (listing === undefined) {
    const error = "listing the mirror printed no snapshot list";
    run.log("agent", error);
    return { outcome: failed(error, outcome.exit_code) };
  }
  return listing;
}

async function copyToMirror(deps: CopyJobDeps, mirrorRun: MirrorRun): Promise<JobOutcome> {
  const { run } = mirrorRun;
  const ids = run.command.copy.snapshot_ids.slice(0, COPY_SNAPSHOTS_MAX);
  const probe = await probeMirror(deps, mirrorRun);
  if ("outcome" in probe) {
    return probe.outcome;
  }
  const initialised = !probe.exists;
  if (initialised) {
    run.log(
      "agent",
      "the mirror repository does not exist yet: creating it with the repository's chunker parameters",
    );
    const init = await runOnMirror(deps, mirrorRun, { subcommand: "init", args: ["--copy-chunker-params"] });
    if (init.outcome.status !== "succeeded") {
      return withContext(init.outcome, "creating the mirror failed");
    }
  }
  run.log("agent", `copying ${ids.length} snapshot${ids.length === 1 ? "" : "s"} to the mirror`);
  const copied = await runOnMirror(deps, mirrorRun, { subcommand: "copy", args: ids });
  if (copied.outcome.status !== "succeeded") {
    return withContext(copied.outcome, "copying to the mirror failed");
  }
  const listing = await listMirror(deps, mirrorRun);
  if ("outcome" in listing) {
    return listing.outcome;
  }
  const missing = ids.filter((id) => !listing.held.has(id));
  const summary: CopySummary = {
    initialised,
    requested: ids.length,
    mirrored: ids.length - missing.length,
    missing,
    mirror_snapshot_count: listing.count,
    mirror_latest_time: listing.latest,
  };
  if (missing.length > 0) {
    const error = `the mirror holds no copy of ${missing.length} of the ${ids.length} snapshots after the copy`;
    run.log("agent", error);
    return { ...failed(error, copied.outcome.exit_code), summary };
  }
  run.log("agent", `the mirror holds all ${ids.length} snapshots; ${listing.count} in all`);
  return { status: "succeeded", exit_code: 0, summary };
}

export function createCopyJob(deps: CopyJobDeps): JobHandler<CommandRunCopy> {
  return (run) =>
    runRepositoryJob(deps, run, {
      tool: async (context) => {
        const mirror = deps.credentials.forCommand(run.command).repository("mirror");
        if (mirror === undefined) {
          run.log("agent", "no mirror credentials have been pushed to this agent; restic was not run");
          return failed(NO_MIRROR_CREDENTIALS_ERROR);
        }
        return copyToMirror(deps, { run, context, mirror });
      },
    });
}
