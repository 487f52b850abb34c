/**
 * @module routes/source-groups-api
 * Source groups of a host as JSON, host default hooks, and run-now. Viewers read, operators write;
 * hook text is shown to and accepted from admins only: others see `has_pre_hook` and get 403 when
 * they send a hook field. Audit entries name fields, never values. The sources page and its forms
 * are in routes/source-groups-pages.ts; what both check is in sources/source-group-requests.ts.
 */

import type { Context, Hono } from "hono";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, auditOf, hasRole } from "../auth/actor.js";
import { freshnessJson, hostFreshness } from "../freshness/freshness.js";
import { apiGroup, HOST_ID } from "../openapi/api-route.js";
import {
  HostHooksAnswer,
  RunNowQueued,
  RunNowStarted,
  SourceGroupAnswer,
  SourceGroupList,
} from "../openapi/source-schemas.js";
import { createGroupFor, runGroupNowFor, updateGroupFor } from "../sources/source-group-requests.js";
import {
  CreateGroupBody,
  HostHooksBody,
  RunNowBody,
  UpdateGroupBody,
} from "../sources/source-group-schema.js";
import { deleteGroup, getGroup, groupJson, listGroups, setHostHooks } from "../sources/source-groups.js";

const GROUP = { id: "The host's id.", gid: "The source group's id." };

const HOOKS =
  "Hook text is shown to and accepted from admins only; others see has_pre_hook and has_post_hook.";

/** `view` says, per caller, whether hook text is shown: admins only. */
interface GroupContext {
  deps: AppDeps;
  view: (c: Context<AppEnv>) => { showHooks: boolean; key: Uint8Array };
}

export const SOURCE_GROUP_API = apiGroup<GroupContext>({ tag: "Source groups" });

SOURCE_GROUP_API.add({
  id: "listSourceGroups",
  method: "get",
  path: "/api/hosts/:id/source-groups",
  summary: "A host's source groups with their freshness",
  description: HOOKS,
  access: "viewer",
  params: HOST_ID,
  responses: { 200: { description: "The groups.", schema: SourceGroupList } },
  handler: async (c, _input, { deps, view }) => {
    const groups = await listGroups(deps.db, c.req.param("id"));
    const freshness = await hostFreshness(deps, c.req.param("id"));
    return c.json({
      source_groups: groups.map((group) => {
        const judged = freshness.get(group.id);
        return { ...groupJson(group, view(c)), freshness: judged ? freshnessJson(judged) : null };
      }),
    });
  },
});

SOURCE_GROUP_API.add({
  id: "createSourceGroup",
  method: "post",
  path: "/api/hosts/:id/source-groups",
  summary: "Add a source group",
  description: `Its name is also the snapshots' tag. ${HOOKS}`,
  access: "operator",
  params: HOST_ID,
  body: CreateGroupBody,
  responses: { 201: { description: "The new group.", schema: SourceGroupAnswer } },
  errors: { 409: "The host already has a group of that name." },
  handler: async (c, { body }, { deps, view }) => {
    const group = await createGroupFor(deps, auditOf(c), c.req.param("id"), body);
    return c.json({ source_group: groupJson(group, view(c)) }, 201);
  },
});

SOURCE_GROUP_API.add({
  id: "getSourceGroup",
  method: "get",
  path: "/api/hosts/:id/source-groups/:gid",
  summary: "One source group",
  description: HOOKS,
  access: "viewer",
  params: GROUP,
  responses: { 200: { description: "The group.", schema: SourceGroupAnswer } },
  handler: async (c, _input, { deps, view }) => {
    const group = await getGroup(deps.db, c.req.param("id"), c.req.param("gid"));
    return c.json({ source_group: groupJson(group, view(c)) });
  },
});

SOURCE_GROUP_API.add({
  id: "updateSourceGroup",
  method: "put",
  path: "/api/hosts/:id/source-groups/:gid",
  summary: "Change a source group",
  description: `Absent fields keep their value; a hook set to null or "" is removed. ${HOOKS}`,
  access: "operator",
  params: GROUP,
  body: UpdateGroupBody,
  responses: { 200: { description: "The group as changed.", schema: SourceGroupAnswer } },
  errors: { 409: "The host already has a group of that name." },
  handler: async (c, { body }, { deps, view }) => {
    const group = await updateGroupFor(deps, auditOf(c), c.req.param("id"), c.req.param("gid"), body);
    return c.json({ source_group: groupJson(group, view(c)) });
  },
});

SOURCE_GROUP_API.add({
  id: "deleteSourceGroup",
  method: "delete",
  path: "/api/hosts/:id/source-groups/:gid",
  summary: "Delete a source group",
  access: "operator",
  params: GROUP,
  responses: { 204: { description: "Deleted." } },
  errors: { 409: "Schedules still name the group; `details` lists them and nothing was deleted." },
  handler: async (c, _input, { deps }) => {
    await deleteGroup(deps, auditOf(c), c.req.param("id"), c.req.param("gid"));
    return c.body(null, 204);
  },
});

SOURCE_GROUP_API.add({
  id: "runSourceGroup",
  method: "post",
  path: "/api/hosts/:id/source-groups/:gid/run",
  summary: "Back up one source group now",
  description:
    "The optional body's caps replace the group's own for this run (never above the host's). An offline host gets the run queued, retried under the group's retry settings.",
  access: "operator",
  params: GROUP,
  body: RunNowBody,
  bodyOptional: true,
  responses: {
    201: { description: "The backup job was sent.", schema: RunNowStarted },
    202: { description: "The host is offline: the run is queued.", schema: RunNowQueued },
  },
  handler: async (c, { body }, { deps }) => {
    // The body is optional: an empty one runs under the group's own caps.
    const outcome = await runGroupNowFor(deps, auditOf(c), c.req.param("id"), c.req.param("gid"), body);
    if (outcome.outcome === "queued") {
      return c.json({ pending_run_id: outcome.pendingRunId }, 202);
    }
    return c.json({ job_id: outcome.jobId }, 201);
  },
});

SOURCE_GROUP_API.add({
  id: "putHostHooks",
  method: "put",
  path: "/api/hosts/:id/hooks",
  summary: "Set the host's default pre- and post-backup hooks",
  access: "admin",
  params: HOST_ID,
  body: HostHooksBody,
  responses: { 200: { description: "Whether each default hook is set now.", schema: HostHooksAnswer } },
  handler: async (c, { body }, { deps }) => {
    const hostId = c.req.param("id");
    return c.json(await setHostHooks(deps, auditOf(c), hostId, body));
  },
});

export function sourceGroupApiRoutes(deps: AppDeps): Hono<AppEnv> {
  const view = (c: Context<AppEnv>) => ({
    showHooks: hasRole(c.get("actor"), "admin"),
    key: deps.keys.secret,
  });
  return SOURCE_GROUP_API.routes({ deps, view });
}
