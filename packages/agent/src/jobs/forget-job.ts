/**
 * @module jobs/forget-job
 * `forget`: every group's policy is checked first (forget-policy.ts), then one
 * `restic --json forget --tag <tag> --group-by host,tags --keep-...` per group, in order, between
 * the hooks. Never `--prune`. The first failing group stops the job; groups already done stay
 * done. restic's JSON array is summarised into one log line per tag (how many snapshots were
 * removed, which) instead of being logged raw. After success: the snapshot list and a `repo.stats`
 * with `last_forget_at` (and the snapshot count). When an earlier group removed snapshots and a
 * later one failed, the snapshot list is still reported, because it did change.
 *
 * With `snapshot_ids` (protocol 7; `forget_groups` is then empty): one `restic forget <id>...` and
 * nothing else, no policy. restic skips an id it cannot find with "Ignoring ..." on stderr and
 * still exits 0; the job fails then, naming the id, because the operator asked for that snapshot.
 * The snapshot list is reported afterwards in any case but cancellation: something may be gone.
 */
import type { CommandRunForget, JobSummary } from "@fleetback/protocol";
import { renderStderrLine } from "./backup-output.js";
import { describeForget, type ForgetResult, parseForgetOutput } from "./forget-output.js";
import { type ForgetRun, planForget } from "./forget-policy.js";
import { failed, type JobHandler, type JobOutcome, type JobRun } from "./job-types.js";
import {
  isCleanSuccess,
  type RepositoryContext,
  type RepositoryJobDeps,
  runRepositoryJob,
} from "./repository-job.js";
import { reportSnapshotList } from "./snapshot-listing.js";
import { createErrorCollector, toolOutcome } from "./tool-outcome.js";

interface GroupDone {
  tag: string;
  result: ForgetResult | undefined;
}

async function forgetGroup(
  deps: RepositoryJobDeps,
  run: JobRun,
  context: RepositoryContext,
  entry: ForgetRun,
): Promise<{ outcome: JobOutcome; result: ForgetResult | undefined }> {
  let json: string | undefined;
  const errors = createErrorCollector();
  const result = await deps.restic.run({
    subcommand: "forget",
    args: entry.args,
    repository: context.repository,
    caps: context.caps,
    json: true,
    signal: run.signal,
    onLine: (line) => {
      if (line.stream === "stderr") {
        errors.observe("stderr", line.text);
        run.log("stderr", renderStderrLine(line.text));
        return;
      }
      // The result is one JSON array on one line; anything else on stdout is for people.
      if (json === undefined && line.text.startsWith("[")) {
        json = line.text;
        return;
      }
      run.log("stdout", line.text);
    },
  });
  const outcome = toolOutcome(result, deps.restic.command, errors.best());
  const parsed = json === undefined ? undefined : parseForgetOutput(json);
  if (parsed !== undefined) {
    run.log("agent", describeForget(entry.tag, parsed));
  } else if (outcome.status === "succeeded") {
    run.log("agent", `forget tag ${entry.tag}: done, but restic printed no result this agent can read`);
  }
  return { outcome, result: parsed };
}

/** `Ignoring "<id>": ...`: restic's words (0.14 to 0.18) for an id it did not forget. */
const IGNORED_ID = /^Ignoring "([0-9a-f]+)"/;

function forgetSnapshots(deps: RepositoryJobDeps, run: JobRun, ids: readonly string[]): Promise<JobOutcome> {
  const ignored: string[] = [];
  return runRepositoryJob(deps, run, {
    async tool(context) {
      run.log("agent", `forget ${ids.length} snapshot${ids.length === 1 ? "" : "s"}: ${ids.join(", ")}`);
      const errors = createErrorCollector();
      const result = await deps.restic.run({
        subcommand: "forget",
        args: [...ids],
        repository: context.repository,
        caps: context.caps,
        signal: run.signal,
        onLine: (line) => {
          if (line.stream === "stderr") {
            const match = IGNORED_ID.exec(line.text);
            if (match?.[1] !== undefined) {
              ignored.push(match[1]);
            }
            errors.observe("stderr", line.text);
            run.log("stderr", renderStderrLine(line.text));
            return;
          }
          run.log("stdout", line.text);
        },
      });
      const outcome = toolOutcome(result, deps.restic.command, errors.best());
      if (outcome.status !== "succeeded") {
        return outcome;
      }
      if (ignored.length > 0) {
        const error = `restic did not forget ${ignored.join(", ")}: no such snapshot in the repository`;
        run.log("agent", error);
        return { ...failed(error, 0), summary: { snapshots_removed: ids.length - ignored.length } };
      }
      return {
        status: "succeeded",
        exit_code: 0,
        summary: { snapshots_removed: ids.length, snapshot_ids: [...ids] },
      };
    },
    async report(context, outcome) {
      if (isCleanSuccess(run, outcome)) {
        const snapshotCount = (await reportSnapshotList(deps, run, context))?.length;
        if (snapshotCount !== undefined) {
          deps.reportStats({ snapshot_count: snapshotCount });
        }
        return;
      }
      if (!run.signal.aborted) {
        await reportSnapshotList(deps, run, context);
      }
    },
  });
}

function summaryOf(done: GroupDone[]): JobSummary {
  const counted = done.flatMap((group) => (group.result ? [group.result] : []));
  return {
    snapshots_removed: counted.reduce((sum, result) => sum + result.removed, 0),
    snapshots_kept: counted.reduce((sum, result) => sum + result.kept, 0),
    groups: done.map((group) => ({
      tag: group.tag,
      ...(group.result ? { removed: group.result.removed, kept: group.result.kept } : {}),
    })),
  };
}

export function createForgetJob(deps: RepositoryJobDeps): JobHandler<CommandRunForget> {
  return async (run) => {
    const ids = run.command.snapshot_ids;
    if (ids !== undefined) {
      if (run.command.forget_groups.length > 0) {
        const error = "forget: snapshot_ids and forget_groups together; the server sends one or the other";
        run.log("agent", error);
        return failed(error);
      }
      return forgetSnapshots(deps, run, ids);
    }
    const plan = planForget(run.command.forget_groups);
    if (!plan.ok) {
      run.log("agent", plan.error);
      return failed(plan.error);
    }
    const done: GroupDone[] = [];
    // Unknown counts (unreadable output) are treated as "may have removed something".
    const removedAny = () => done.some((group) => group.result === undefined || group.result.removed > 0);
    return runRepositoryJob(deps, run, {
      async tool(context) {
        for (const entry of plan.runs) {
          if (run.signal.aborted) {
            return { status: "cancelled", exit_code: null };
          }
          const { outcome, result } = await forgetGroup(deps, run, context, entry);
          if (outcome.status !== "succeeded") {
            if (result !== undefined) {
              done.push({ tag: entry.tag, result });
            }
            const error = outcome.error === undefined ? undefined : `tag ${entry.tag}: ${outcome.error}`;
            return { ...outcome, ...(error === undefined ? {} : { error }) };
          }
          done.push({ tag: entry.tag, result });
        }
        return { status: "succeeded", exit_code: 0, summary: summaryOf(done) };
      },
      async report(context, outcome) {
        if (isCleanSuccess(run, outcome)) {
          const snapshotCount = (await reportSnapshotList(deps, run, context))?.length;
          deps.reportStats({
            last_forget_at: deps.clock.now().toISOString(),
            ...(snapshotCount === undefined ? {} : { snapshot_count: snapshotCount }),
          });
          return;
        }
        if (!run.signal.aborted && removedAny()) {
          await reportSnapshotList(deps, run, context);
        }
      },
    });
  };
}
