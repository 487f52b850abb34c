/**
 * @module routes/source-groups-api
 * Source groups of a host as JSON, host default hooks, and run-now. Viewers read, operators write;
 * hook text is shown to and accepted from admins only: others see `has_pre_hook` and get 403 when
 * they send a hook field. Audit entries name fields, never values. The sources page and its forms
 * are in routes/source-groups-pages.ts; what both check is in sources/source-group-requests.ts.
 */

import { type Context, Hono } from "hono";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, auditOf, hasRole, requireRole } from "../auth/actor.js";
import { freshnessJson, hostFreshness } from "../health/freshness.js";
import { readJson, readOptionalJson } from "../http/validate.js";
import { createGroupFor, runGroupNowFor, updateGroupFor } from "../sources/source-group-requests.js";
import {
  CreateGroupBody,
  HostHooksBody,
  RunNowBody,
  UpdateGroupBody,
} from "../sources/source-group-schema.js";
import { deleteGroup, getGroup, groupJson, listGroups, setHostHooks } from "../sources/source-groups.js";

export function sourceGroupApiRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const viewer = requireRole("viewer");
  const operator = requireRole("operator");
  const admin = requireRole("admin");

  const view = (c: Context<AppEnv>) => ({
    showHooks: hasRole(c.get("actor"), "admin"),
    key: deps.keys.secret,
  });

  routes.get("/api/hosts/:id/source-groups", viewer, async (c) => {
    const groups = await listGroups(deps.db, c.req.param("id"));
    const freshness = await hostFreshness(deps, c.req.param("id"));
    return c.json({
      source_groups: groups.map((group) => {
        const judged = freshness.get(group.id);
        return { ...groupJson(group, view(c)), freshness: judged ? freshnessJson(judged) : null };
      }),
    });
  });
  routes.post("/api/hosts/:id/source-groups", operator, async (c) => {
    const body = await readJson(c, CreateGroupBody);
    const group = await createGroupFor(deps, auditOf(c), c.req.param("id"), body);
    return c.json({ source_group: groupJson(group, view(c)) }, 201);
  });
  routes.get("/api/hosts/:id/source-groups/:gid", viewer, async (c) => {
    const group = await getGroup(deps.db, c.req.param("id"), c.req.param("gid"));
    return c.json({ source_group: groupJson(group, view(c)) });
  });
  routes.put("/api/hosts/:id/source-groups/:gid", operator, async (c) => {
    const body = await readJson(c, UpdateGroupBody);
    const group = await updateGroupFor(deps, auditOf(c), c.req.param("id"), c.req.param("gid"), body);
    return c.json({ source_group: groupJson(group, view(c)) });
  });
  routes.delete("/api/hosts/:id/source-groups/:gid", operator, async (c) => {
    await deleteGroup(deps, auditOf(c), c.req.param("id"), c.req.param("gid"));
    return c.body(null, 204);
  });
  routes.post("/api/hosts/:id/source-groups/:gid/run", operator, async (c) => {
    // The body is optional: an empty one runs under the group's own caps.
    const body = await readOptionalJson(c, RunNowBody);
    const outcome = await runGroupNowFor(deps, auditOf(c), c.req.param("id"), c.req.param("gid"), body);
    if (outcome.outcome === "queued") {
      return c.json({ pending_run_id: outcome.pendingRunId }, 202);
    }
    return c.json({ job_id: outcome.jobId }, 201);
  });
  routes.put("/api/hosts/:id/hooks", admin, async (c) => {
    const body = await readJson(c, HostHooksBody);
    const hostId = c.req.param("id");
    return c.json(await setHostHooks(deps, auditOf(c), hostId, body));
  });
  return routes;
}
