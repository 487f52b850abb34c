/**
 * @module routes/source-groups
 * Source groups of a host (JSON and the sources page's forms), host default hooks, and run-now.
 * Viewers read, operators write; hook text is shown to and accepted from admins only: others see
 * `has_pre_hook` and get 403 when they send a hook field. Audit entries name fields, never values.
 */
import type { SourceGroup } from "@fleetback/db";
import { KEEP_COUNT_KEYS, KEEP_WITHIN_KEYS } from "@fleetback/protocol";
import { type Context, Hono } from "hono";
import { Type } from "typebox";
import type { AppDeps } from "../app.js";
import { writeAudit } from "../audit/audit.js";
import { type Actor, type AppEnv, hasRole, requireRole } from "../auth/actor.js";
import { forbidden, RequestError, unavailable } from "../errors.js";
import { clientIp, redirectAfterPost, renderPage } from "../http/render.js";
import { readForm, readJson, validate } from "../http/validate.js";
import { listPendingRuns, pendingRunJson } from "../retries/pending-runs.js";
import { type BackupOutcome, runGroupNow } from "../sources/dispatch-backup.js";
import { openHook } from "../sources/hooks.js";
import { type RetentionChange, retentionChange } from "../sources/retention-change.js";
import { listSchedules, scheduleJson } from "../sources/schedules.js";
import {
  CreateGroupBody,
  HOOK_FIELDS,
  HostHooksBody,
  UpdateGroupBody,
} from "../sources/source-group-schema.js";
import {
  createGroup,
  deleteGroup,
  getGroup,
  groupJson,
  listGroups,
  requireHost,
  setHostHooks,
  updateGroup,
} from "../sources/source-groups.js";

const NUMBER_FIELD = Type.String({ pattern: "^[0-9]{0,7}$", description: "a whole number" });
const formFields: Record<string, ReturnType<typeof Type.Optional>> = {
  name: Type.Optional(Type.String({ maxLength: 200 })),
  includes: Type.Optional(Type.String({ maxLength: 1_000_000 })),
  excludes: Type.Optional(Type.String({ maxLength: 1_000_000 })),
  retry_max: Type.Optional(NUMBER_FIELD),
  retry_backoff_seconds: Type.Optional(NUMBER_FIELD),
  pre_hook: Type.Optional(Type.String({ maxLength: 16_384 })),
  post_hook: Type.Optional(Type.String({ maxLength: 16_384 })),
};
for (const key of KEEP_COUNT_KEYS) {
  formFields[`keep_${key}`] = Type.Optional(NUMBER_FIELD);
}
for (const key of KEEP_WITHIN_KEYS) {
  formFields[`keep_${key}`] = Type.Optional(Type.String({ maxLength: 64 }));
}
const GroupForm = Type.Object(formFields, { additionalProperties: false });
const EmptyForm = Type.Object({}, { additionalProperties: false });

function actorOf(c: Context<AppEnv>): Actor {
  const actor = c.get("actor");
  if (!actor) {
    throw new RequestError("unauthorised", "Sign in first.");
  }
  return actor;
}

/** Non-admins may not set or read hooks; a body naming one is refused outright. */
function refuseHooksUnlessAdmin(
  c: Context<AppEnv>,
  body: Record<string, unknown>,
  fields: readonly string[],
) {
  if (!hasRole(c.get("actor"), "admin") && fields.some((field) => body[field] !== undefined)) {
    throw forbidden("Hooks run as root on the host: only an admin may set them.");
  }
}

function lines(text: string | undefined): string[] {
  return (text ?? "")
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== "");
}

/** Turns the page's form into the API body, so one schema names what is wrong. */
function groupBodyFromForm(form: Record<string, string | undefined>): Record<string, unknown> {
  const retention: Record<string, unknown> = {};
  for (const key of KEEP_COUNT_KEYS) {
    const value = form[`keep_${key}`]?.trim();
    if (value) {
      retention[key] = Number(value);
    }
  }
  for (const key of KEEP_WITHIN_KEYS) {
    const value = form[`keep_${key}`]?.trim();
    if (value) {
      retention[key] = value;
    }
  }
  const body: Record<string, unknown> = {
    name: form.name?.trim() ?? "",
    includes: lines(form.includes),
    excludes: lines(form.excludes),
    retention_policy: retention,
  };
  if (form.retry_max) {
    body.retry_max = Number(form.retry_max);
  }
  if (form.retry_backoff_seconds) {
    body.retry_backoff_seconds = Number(form.retry_backoff_seconds);
  }
  for (const field of HOOK_FIELDS) {
    if (form[field] !== undefined) {
      body[field] = form[field];
    }
  }
  return body;
}

export function sourceGroupRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const viewer = requireRole("viewer");
  const operator = requireRole("operator");
  const admin = requireRole("admin");

  const view = (c: Context<AppEnv>) => ({
    showHooks: hasRole(c.get("actor"), "admin"),
    key: deps.keys.secret,
  });

  async function audit(
    c: Context<AppEnv>,
    action: string,
    targetId: string,
    details: Record<string, unknown>,
  ) {
    await writeAudit(deps.db, deps.clock, {
      actor: actorOf(c),
      action,
      targetKind: "source_group",
      targetId,
      details,
      ip: clientIp(c),
    });
  }

  /**
   * Lowering a retention policy makes the next forget (and prune) destroy history that cannot be
   * brought back: an admin's decision, never an operator's. Returns the change for the audit.
   */
  async function checkRetention(
    c: Context<AppEnv>,
    hostId: string,
    current: SourceGroup | undefined,
    body: CreateGroupBody | UpdateGroupBody,
  ): Promise<RetentionChange | undefined> {
    if (current === undefined) {
      await requireHost(deps.db, hostId);
    }
    const change = await retentionChange(deps.db, hostId, current, body);
    if (change !== undefined && change.lowered.length > 0 && !hasRole(c.get("actor"), "admin")) {
      throw forbidden(
        `retention_policy: lowering ${change.lowered.map((key) => `keep ${key}`).join(", ")} makes forget and prune remove snapshots for good; only an admin may lower a retention policy`,
      );
    }
    return change;
  }

  const retentionDetails = (change: RetentionChange | undefined) =>
    change === undefined
      ? {}
      : { retention_policy: { from: change.from, to: change.to, lowered: change.lowered } };

  async function create(c: Context<AppEnv>, body: CreateGroupBody) {
    refuseHooksUnlessAdmin(c, body, HOOK_FIELDS);
    const hostId = c.req.param("id") ?? "";
    const change = await checkRetention(c, hostId, undefined, body);
    const group = await createGroup(deps, hostId, body);
    await audit(c, "source_group.create", group.id, {
      host_id: hostId,
      fields: Object.keys(body),
      ...retentionDetails(change),
    });
    return group;
  }

  async function update(c: Context<AppEnv>, body: UpdateGroupBody) {
    refuseHooksUnlessAdmin(c, body, HOOK_FIELDS);
    const hostId = c.req.param("id") ?? "";
    const groupId = c.req.param("gid") ?? "";
    const change = await checkRetention(c, hostId, await getGroup(deps.db, hostId, groupId), body);
    const group = await updateGroup(deps, hostId, groupId, body);
    await audit(c, "source_group.update", group.id, {
      host_id: hostId,
      fields: Object.keys(body),
      ...retentionDetails(change),
    });
    return group;
  }

  async function remove(c: Context<AppEnv>) {
    const hostId = c.req.param("id") ?? "";
    const group = await deleteGroup(deps, hostId, c.req.param("gid") ?? "");
    await audit(c, "source_group.delete", group.id, { host_id: hostId, name: group.name });
  }

  async function runNow(c: Context<AppEnv>): Promise<BackupOutcome & { outcome: "dispatched" | "queued" }> {
    const hostId = c.req.param("id") ?? "";
    const groupId = c.req.param("gid") ?? "";
    const outcome = await runGroupNow(deps, hostId, groupId, actorOf(c).userId);
    if (outcome.outcome === "offline") {
      throw unavailable(
        "The host is offline and this group allows no retries (retry_max 0); nothing was queued.",
      );
    }
    await audit(c, "source_group.run", groupId, {
      host_id: hostId,
      ...(outcome.outcome === "dispatched"
        ? { job_id: outcome.jobId }
        : { pending_run_id: outcome.pendingRunId }),
    });
    return outcome;
  }

  routes.get("/api/hosts/:id/source-groups", viewer, async (c) => {
    const groups = await listGroups(deps.db, c.req.param("id"));
    return c.json({ source_groups: groups.map((group) => groupJson(group, view(c))) });
  });
  routes.post("/api/hosts/:id/source-groups", operator, async (c) => {
    const group = await create(c, await readJson(c, CreateGroupBody));
    return c.json({ source_group: groupJson(group, view(c)) }, 201);
  });
  routes.get("/api/hosts/:id/source-groups/:gid", viewer, async (c) => {
    const group = await getGroup(deps.db, c.req.param("id"), c.req.param("gid"));
    return c.json({ source_group: groupJson(group, view(c)) });
  });
  routes.put("/api/hosts/:id/source-groups/:gid", operator, async (c) => {
    const group = await update(c, await readJson(c, UpdateGroupBody));
    return c.json({ source_group: groupJson(group, view(c)) });
  });
  routes.delete("/api/hosts/:id/source-groups/:gid", operator, async (c) => {
    await remove(c);
    return c.body(null, 204);
  });
  routes.post("/api/hosts/:id/source-groups/:gid/run", operator, async (c) => {
    const outcome = await runNow(c);
    if (outcome.outcome === "queued") {
      return c.json({ pending_run_id: outcome.pendingRunId }, 202);
    }
    return c.json({ job_id: outcome.jobId }, 201);
  });
  routes.put("/api/hosts/:id/hooks", admin, async (c) => {
    const body = await readJson(c, HostHooksBody);
    const hostId = c.req.param("id");
    const result = await setHostHooks(deps, hostId, body);
    await writeAudit(deps.db, deps.clock, {
      actor: actorOf(c),
      action: "host.hooks.update",
      targetKind: "host",
      targetId: hostId,
      details: { fields: Object.keys(body) },
      ip: clientIp(c),
    });
    return c.json(result);
  });

  routes.get("/hosts/:id/sources", viewer, async (c) => {
    const hostId = c.req.param("id");
    const host = await requireHost(deps.db, hostId);
    const groups = await listGroups(deps.db, hostId);
    const schedules = await listSchedules(deps.db, hostId);
    const pending = await listPendingRuns(deps.db, hostId);
    const showHooks = hasRole(c.get("actor"), "admin");
    const names = Object.fromEntries(groups.map((group) => [group.id, group.name]));
    return renderPage(c, deps.views, "pages/host-sources.njk", {
      title: `${host.name}: sources`,
      host,
      connected: deps.hub.isOnline(hostId),
      groups: groups.map((group) => groupJson(group, { showHooks, key: deps.keys.secret })),
      schedules: schedules.map(scheduleJson),
      groupNames: names,
      pendingRuns: pending.map(pendingRunJson),
      hostHooks: showHooks
        ? {
            pre: openHook(deps.keys.secret, hostId, host.preHookDefault, deps.log) ?? "",
            post: openHook(deps.keys.secret, hostId, host.postHookDefault, deps.log) ?? "",
          }
        : undefined,
      keepCountKeys: KEEP_COUNT_KEYS,
      keepWithinKeys: KEEP_WITHIN_KEYS,
      started: c.req.query("started"),
      queued: c.req.query("queued"),
    });
  });
  routes.post("/hosts/:id/source-groups", operator, async (c) => {
    const form = await readForm(c, GroupForm);
    await create(c, validate(CreateGroupBody, groupBodyFromForm(form as Record<string, string | undefined>)));
    return redirectAfterPost(c, `/hosts/${c.req.param("id")}/sources`);
  });
  routes.post("/hosts/:id/source-groups/:gid", operator, async (c) => {
    const form = await readForm(c, GroupForm);
    await update(c, validate(UpdateGroupBody, groupBodyFromForm(form as Record<string, string | undefined>)));
    return redirectAfterPost(c, `/hosts/${c.req.param("id")}/sources`);
  });
  routes.post("/hosts/:id/source-groups/:gid/delete", operator, async (c) => {
    await readForm(c, EmptyForm);
    await remove(c);
    return redirectAfterPost(c, `/hosts/${c.req.param("id")}/sources`);
  });
  routes.post("/hosts/:id/source-groups/:gid/run", operator, async (c) => {
    await readForm(c, EmptyForm);
    const outcome = await runNow(c);
    const query =
      outcome.outcome === "queued" ? `queued=${outcome.pendingRunId}` : `started=${outcome.jobId}`;
    return redirectAfterPost(c, `/hosts/${c.req.param("id")}/sources?${query}`);
  });
  routes.post("/hosts/:id/hooks", admin, async (c) => {
    const form = await readForm(
      c,
      Type.Object(
        {
          pre_hook_default: Type.Optional(Type.String({ maxLength: 16_384 })),
          post_hook_default: Type.Optional(Type.String({ maxLength: 16_384 })),
        },
        { additionalProperties: false },
      ),
    );
    const hostId = c.req.param("id");
    await setHostHooks(deps, hostId, form);
    await writeAudit(deps.db, deps.clock, {
      actor: actorOf(c),
      action: "host.hooks.update",
      targetKind: "host",
      targetId: hostId,
      details: { fields: Object.keys(form) },
      ip: clientIp(c),
    });
    return redirectAfterPost(c, `/hosts/${hostId}/sources`);
  });
  return routes;
}
