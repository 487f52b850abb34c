/**
 * @module routes/restore-api
 * The restore wizard's JSON twins: a folder of a snapshot's tree, and starting a restore. Both
 * need the operator role. A listing that fails answers by its cause: 503 offline, 504 no reply in
 * time, 502 the agent's own error; a refused restore names its first problem (400).
 */

import { TreeChildName } from "@fleetback/protocol";
import type { Hono } from "hono";
import { Type } from "typebox";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, actorOf } from "../auth/actor.js";
import { RequestError, unavailable } from "../errors.js";
import { agentDirsOf, refuseAgentDirPaths } from "../hosts/agent-dirs.js";
import { requireHost } from "../hosts/require-host.js";
import { clientIp } from "../http/render.js";
import { invalidFrom } from "../http/validate.js";
import { apiGroup, HOST_ID, OFFLINE } from "../openapi/api-route.js";
import { RecoveryStarted, RestoreStarted, TreeFolder } from "../openapi/repository-schemas.js";
import { RecoverBody, recoverHost } from "../restore/recover-host.js";
import { PathText, SnapshotIdField, TreePath, WizardSession } from "../restore/restore-fields.js";
import { startRestore } from "../restore/restore-jobs.js";
import {
  checkRestore,
  DEFAULT_RESTORE_TARGET,
  findHostSnapshot,
  MAX_RESTORE_PATHS,
} from "../restore/restore-request.js";
import { resolveRestoreSource } from "../restore/restore-source.js";
import { pagingRefused } from "../restore/restore-wizard.js";
import type { TreeLister } from "../restore/tree-listing.js";

export const ApiTreeQuery = Type.Object(
  {
    snapshot_id: SnapshotIdField,
    path: TreePath,
    session: Type.Optional(WizardSession),
    after: Type.Optional(TreeChildName),
  },
  { additionalProperties: false },
);
export const RestoreBody = Type.Object(
  {
    snapshot_id: Type.String({ maxLength: 64 }),
    paths: Type.Array(PathText, { maxItems: MAX_RESTORE_PATHS }),
    in_place: Type.Boolean(),
    target_dir: Type.Optional(Type.String({ maxLength: 4096 })),
    confirm_hostname: Type.Optional(Type.String({ maxLength: 256 })),
    /** Issue 38: the host whose snapshot this is, when it is not this one. */
    from_host_id: Type.Optional(
      Type.String({
        maxLength: 64,
        description:
          "The host whose snapshot `snapshot_id` is, when it is not this one: that snapshot is restored onto this host (protocol 14 agents).",
      }),
    ),
  },
  { additionalProperties: false },
);

/** `trees` is shared with the wizard's pages, so both serve from one per-session cache. */
export const RESTORE_API = apiGroup<{ deps: AppDeps; trees: TreeLister }>({ tag: "Restore" });

RESTORE_API.add({
  id: "listSnapshotTree",
  method: "get",
  path: "/api/hosts/:id/tree",
  summary: "The direct children of one folder of a snapshot",
  description:
    "Asked of the agent and cached per `session` (about 30 minutes). Large folders come in pages: pass `next_after` back as `after`.",
  access: "operator",
  params: HOST_ID,
  query: ApiTreeQuery,
  responses: { 200: { description: "The folder's entries.", schema: TreeFolder } },
  errors: {
    502: "The agent could not list it.",
    503: "The host is offline.",
    504: "The agent did not answer in time.",
  },
  handler: async (c, { query }, { deps, trees }) => {
    const host = await requireHost(deps.db, c.req.param("id"));
    refuseAgentDirPaths("path", [query.path], agentDirsOf(host));
    const snapshot = await findHostSnapshot(deps.db, host.id, query.snapshot_id);
    if (!snapshot) {
      throw new RequestError("invalid", `snapshot_id: ${query.snapshot_id} is not a snapshot of this host`);
    }
    const refused = query.after === undefined ? undefined : pagingRefused(host);
    if (refused && !refused.ok) {
      throw new RequestError("invalid", refused.message);
    }
    const listing = await trees.list({
      userId: actorOf(c).userId,
      sessionId: query.session ?? "api",
      hostId: host.id,
      snapshotId: snapshot.id,
      path: query.path,
      after: query.after,
    });
    if (!listing.ok) {
      throw new RequestError(listing.reason === "offline" ? "unavailable" : listing.reason, listing.message);
    }
    return c.json({
      path: query.path,
      entries: listing.entries,
      cached: listing.cached,
      ...(listing.nextAfter === undefined ? {} : { next_after: listing.nextAfter }),
    });
  },
});

RESTORE_API.add({
  id: "startRestore",
  method: "post",
  path: "/api/hosts/:id/restore",
  summary: "Restore paths of a snapshot",
  description:
    "`target_dir` defaults to `$HOME/fleetback-restore/<job-id>/`; an in-place restore needs `confirm_hostname` equal to the host's name. With `from_host_id`, the snapshot is one of that other host, restored onto this one: this host's agent (protocol 14 or later) is given the other host's repository credential (never its admin credential) for this job alone.",
  access: "operator",
  params: HOST_ID,
  body: RestoreBody,
  responses: { 201: { description: "The restore job.", schema: RestoreStarted } },
  errors: { 503: OFFLINE },
  handler: async (c, { body }, { deps }) => {
    const host = await requireHost(deps.db, c.req.param("id"));
    const from = await resolveRestoreSource(deps, host, body.from_host_id);
    if (!from.ok) {
      throw invalidFrom([from.problem]);
    }
    const checked = await checkRestore(
      deps.db,
      host,
      {
        snapshotId: body.snapshot_id,
        paths: body.paths,
        inPlace: body.in_place,
        targetDir: body.target_dir ?? (body.in_place ? "" : DEFAULT_RESTORE_TARGET),
        confirmHostname: body.confirm_hostname ?? "",
      },
      from.source,
    );
    if (!checked.ok) {
      throw invalidFrom(checked.problems);
    }
    const started = await startRestore(deps, host.id, checked.plan, actorOf(c), clientIp(c));
    if (!started.ok) {
      throw unavailable(`${host.name} is offline; nothing was sent.`);
    }
    return c.json({ job_id: started.job.id, target_dir: started.job.params.target_dir }, 201);
  },
});

RESTORE_API.add({
  id: "recoverHost",
  method: "post",
  path: "/api/hosts/:id/recover",
  summary: "Restore every source group from its newest snapshot, one job per group",
  description:
    "What a machine that took over a dead host (a successor) runs first: for each of the host's groups, the newest of its own snapshots under the group's tag is restored whole, in place (`confirm_hostname` equal to the host's name) or under `target_dir`. Every group is checked first; a refusal starts nothing. A group without a snapshot is listed in `skipped`.",
  access: "operator",
  params: HOST_ID,
  body: RecoverBody,
  responses: { 201: { description: "The restore jobs started.", schema: RecoveryStarted } },
  errors: { 503: OFFLINE },
  handler: async (c, { body }, { deps }) => {
    const host = await requireHost(deps.db, c.req.param("id"));
    const recovery = await recoverHost(
      deps,
      host,
      {
        inPlace: body.in_place,
        confirmHostname: body.confirm_hostname ?? "",
        targetDir: body.target_dir ?? "",
      },
      actorOf(c),
      clientIp(c),
    );
    return c.json(recovery, 201);
  },
});

export function restoreApiRoutes(deps: AppDeps, trees: TreeLister): Hono<AppEnv> {
  return RESTORE_API.routes({ deps, trees });
}
