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
 *
 * What the repository lists afterwards decides (issue 31): a snapshot restic said it removed and
 * the listing still holds fails the job (forget-check.ts), and on storage that refuses deletes the
 * job fails saying so (append-only.ts; 0.18 exits 0 there, 0.14 is stopped instead of retrying).
 * After success the listing runs right after restic, before the post hook: the outcome depends on it.
 */
import {
  type CommandRunForget,
  describeForget,
  type JobSummary,
  renderStderrLine,
} from "@fleetback/protocol";
import { createErrorCollector } from "../restic/error-collector.js";
import { type ForgetResult, parseForgetOutput } from "../restic/forget-output.js";
import { watchDeleteRefusal } from "./append-only.js";
import { type ListingAfterForget, listAfterForget } from "./forget-check.js";
import { type ForgetRun, planForget } from "./forget-policy.js";
import { failed, type JobHandler, type JobOutcome, type JobRun } from "./job-types.js";
import { jsonRunLines } from "./kept-stdout.js";
import {
  isCleanSuccess,
  type RepositoryContext,
  type RepositoryJobDeps,
  runRepositoryJob,
} from "./repository-job.js";
import { reportSnapshotList } from "./snapshot-listing.js";
import { toolOutcome } from "./tool-outcome.js";

interface GroupDone {
  tag: string;
  result: ForgetResult | undefined;
}

async function forgetGroup(
  deps: RepositoryJobDeps,
  run: JobRun,
  context: RepositoryContext,
  entry: ForgetRun,
): Promise<{ outcome: JobOutcome; result: ForgetResult | undefined; refused: boolean }> {
  let json: string | undefined;
  const errors = createErrorCollector();
  const refusal = watchDeleteRefusal(run.signal, (text) => run.log("agent", text));
  const handle = jsonRunLines(run, errors, (text) => {
    // The result is one JSON array on one line; anything else on stdout is for people.
    if (json === undefined && text.startsWith("[")) {
      json = text;
      return;
    }
    run.log("stdout", text);
  });
  const result = await deps.restic.run({
    subcommand: "forget",
    args: entry.args,
    repository: context.repository,
    caps: context.caps,
    json: true,
    signal: refusal.signal,
    onLine: (line) => {
      refusal.observe(line);
      handle(line);
    },
  });
  const outcome = refusal.settle(toolOutcome(result, deps.restic.command, errors.best()));
  const parsed = json === undefined ? undefined : parseForgetOutput(json);
  // restic prints what it means to remove before deleting: after a failure that says nothing.
  if (parsed !== undefined && outcome.status === "succeeded") {
    run.log("agent", describeForget(entry.tag, parsed));
  } else if (outcome.status === "succeeded") {
    run.log("agent", `forget tag ${entry.tag}: done, but restic printed no result this agent can read`);
  }
  return { outcome, result: parsed, refused: refusal.refused };
}

/** `Ignoring "<id>": ...`: restic's words (0.14 to 0.18) for an id it did not forget. */
const IGNORED_ID = /^Ignoring "([0-9a-f]+)"/;

function forgetSnapshots(deps: RepositoryJobDeps, run: JobRun, ids: readonly string[]): Promise<JobOutcome> {
  const ignored: string[] = [];
  let listing: ListingAfterForget | undefined;
  return runRepositoryJob(deps, run, {
    async tool(context) {
      run.log("agent", `forget ${ids.length} snapshot${ids.length === 1 ? "" : "s"}: ${ids.join(", ")}`);
      const errors = createErrorCollector();
      const refusal = watchDeleteRefusal(run.signal, (text) => run.log("agent", text));
      const result = await deps.restic.run({
        subcommand: "forget",
        args: [...ids],
        repository: context.repository,
        caps: context.caps,
        signal: refusal.signal,
        onLine: (line) => {
          refusal.observe(line);
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
      const outcome = refusal.settle(toolOutcome(result, deps.restic.command, errors.best()));
      if (outcome.status !== "succeeded") {
        return outcome;
      }
      if (ignored.length > 0) {
        const error = `restic did not forget ${ignored.join(", ")}: no such snapshot in the repository`;
        run.log("agent", error);
        return { ...failed(error, 0), summary: { snapshots_removed: ids.length - ignored.length } };
      }
      if (run.signal.aborted) {
        return outcome;
      }
      listing = await listAfterForget(deps, run, context, ids);
      if (listing.error !== undefined) {
        return failed(listing.error, 0);
      }
      return {
        status: "succeeded",
        exit_code: 0,
        summary: { snapshots_removed: ids.length, snapshot_ids: [...ids] },
      };
    },
    async report(context, outcome) {
      if (listing !== undefined) {
        const snapshotCount = listing.snapshots?.length;
        if (isCleanSuccess(run, outcome) && snapshotCount !== undefined) {
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
    const plan = planForget(run.command.forget_groups, run.command.hosts);
    if (!plan.ok) {
      run.log("agent", plan.error);
      return failed(plan.error);
    }
    const done: GroupDone[] = [];
    let listing: ListingAfterForget | undefined;
    // Unknown counts (unreadable output) are treated as "may have removed something".
    const removedAny = () => done.some((group) => group.result === undefined || group.result.removed > 0);
    return runRepositoryJob(deps, run, {
      async tool(context) {
        for (const entry of plan.runs) {
          if (run.signal.aborted) {
            return { status: "cancelled", exit_code: null };
          }
          const { outcome, result, refused } = await forgetGroup(deps, run, context, entry);
          if (outcome.status !== "succeeded") {
            // restic stopped at a refused delete printed nothing, yet other deletes may have worked.
            if (result !== undefined || refused) {
              done.push({ tag: entry.tag, result });
            }
            const error = outcome.error === undefined ? undefined : `tag ${entry.tag}: ${outcome.error}`;
            return { ...outcome, ...(error === undefined ? {} : { error }) };
          }
          done.push({ tag: entry.tag, result });
        }
        if (!run.signal.aborted) {
          const removed = done.flatMap((group) => group.result?.removedIds ?? []);
          listing = await listAfterForget(deps, run, context, removed);
          if (listing.error !== undefined) {
            return failed(listing.error, 0);
          }
        }
        return { status: "succeeded", exit_code: 0, summary: summaryOf(done) };
      },
      async report(context, outcome) {
        if (listing !== undefined) {
          if (!isCleanSuccess(run, outcome)) {
            return;
          }
          const snapshotCount = listing.snapshots?.length;
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
