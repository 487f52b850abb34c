/**
 * @module restore/recover-host
 * Bringing a host's files back in one action (issue 38.2), as a replacement machine needs after
 * it took over a dead host: for each of the host's source groups, the newest of the host's own
 * snapshots under the group's tag is restored whole (the paths it holds), one tracked restore job
 * per group through the same checks, signed order and job as any restore (restore-request.ts,
 * restore-jobs.ts). Every group is checked before anything is sent, so a wrong confirmation or
 * target starts nothing. A group without a snapshot of its own is named and skipped, and so is one
 * whose paths cannot be restored as asked (in place over the agent's own directories, which hold
 * the new machine's token: `/etc` holds `/etc/fleetback-agent`); the wizard restores its folders.
 */
import { type Database, type Host, snapshots, sourceGroups } from "@fleetback/db";
import { and, asc, desc, eq, sql } from "drizzle-orm";
import { Type } from "typebox";
import type { Actor } from "../auth/actor.js";
import { unavailable } from "../errors.js";
import { invalidFrom } from "../http/validate.js";
import { type JobDeps, startRestore } from "./restore-jobs.js";
import {
  checkRestore,
  DEFAULT_RESTORE_TARGET,
  type RestorePlan,
  restoreWhereProblem,
} from "./restore-request.js";

export const RecoverBody = Type.Object(
  {
    in_place: Type.Boolean({
      description:
        "true: every file goes back where it was (needs confirm_hostname); false: under target_dir",
    }),
    confirm_hostname: Type.Optional(Type.String({ maxLength: 255 })),
    target_dir: Type.Optional(
      Type.String({
        maxLength: 4096,
        description:
          "for a restore beside the files: default $HOME/fleetback-restore/<job-id>/ (one per job)",
      }),
    ),
  },
  { additionalProperties: false },
);

export interface RecoverInput {
  inPlace: boolean;
  confirmHostname: string;
  targetDir: string;
}

export interface Recovery {
  started: Array<{ group: string; snapshot_id: string; job_id: string }>;
  skipped: Array<{ group: string; reason: string }>;
}

/** The newest of the host's own snapshots carrying `tag`. */
async function newestOwn(db: Database, hostId: string, tag: string) {
  const [row] = await db
    .select()
    .from(snapshots)
    .where(
      and(
        eq(snapshots.hostId, hostId),
        eq(snapshots.isOwn, true),
        sql`${snapshots.tags} @> ${JSON.stringify([tag])}::jsonb`,
      ),
    )
    .orderBy(desc(snapshots.time), desc(snapshots.id))
    .limit(1);
  return row;
}

export async function recoverHost(
  deps: JobDeps,
  host: Pick<Host, "id" | "name" | "agentDirs" | "protocolVersion" | "toolVersion">,
  input: RecoverInput,
  actor: Actor,
  ip: string | undefined,
): Promise<Recovery> {
  const target = input.inPlace ? "" : input.targetDir || DEFAULT_RESTORE_TARGET;
  const whereTo = restoreWhereProblem(host, { ...input, targetDir: target });
  if (whereTo !== undefined) {
    throw invalidFrom([whereTo]);
  }
  // Read here rather than through sources/, whose imports lead back to this folder.
  const groups = await deps.db
    .select({ name: sourceGroups.name })
    .from(sourceGroups)
    .where(eq(sourceGroups.hostId, host.id))
    .orderBy(asc(sourceGroups.name));
  if (groups.length === 0) {
    throw invalidFrom([{ field: "host", message: `${host.name} has no source groups to recover` }]);
  }
  const plans: Array<{ group: string; plan: RestorePlan }> = [];
  const skipped: Recovery["skipped"] = [];
  for (const group of groups) {
    const snapshot = await newestOwn(deps.db, host.id, group.name);
    if (!snapshot) {
      skipped.push({ group: group.name, reason: "no snapshot of this group in the host's list" });
      continue;
    }
    const checked = await checkRestore(deps.db, host, {
      snapshotId: snapshot.id,
      paths: snapshot.paths,
      inPlace: input.inPlace,
      targetDir: target,
      confirmHostname: input.confirmHostname,
    });
    if (!checked.ok) {
      const own = checked.problems.filter((problem) => problem.field === "paths");
      if (own.length === checked.problems.length) {
        // The group's own paths (over the agent's directories, in place: they hold the new
        // machine's token): that group is left to the wizard, the others still come back.
        skipped.push({ group: group.name, reason: own.map((problem) => problem.message).join("; ") });
        continue;
      }
      // The same confirmation or target is wrong for every group: nothing is started.
      throw invalidFrom(checked.problems.filter((problem) => problem.field !== "paths"));
    }
    plans.push({ group: group.name, plan: checked.plan });
  }
  if (plans.length === 0) {
    throw invalidFrom([
      { field: "host", message: `no group of ${host.name} has a snapshot yet; nothing to recover` },
    ]);
  }
  const started: Recovery["started"] = [];
  for (const { group, plan } of plans) {
    const outcome = await startRestore(deps, host.id, plan, actor, ip);
    if (!outcome.ok) {
      if (started.length === 0) {
        throw unavailable(`${host.name} is offline; nothing was sent.`);
      }
      // The host went away part-way: what was sent runs; the rest is named, not retried.
      skipped.push({ group, reason: "the host went offline before its restore was sent" });
      continue;
    }
    started.push({ group, snapshot_id: plan.snapshot.id, job_id: outcome.job.id });
  }
  return { started, skipped };
}
