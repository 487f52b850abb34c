/**
 * @module routes/source-groups-pages
 * A host's sources page (its groups, schedules, pending runs and default hooks) and the forms that
 * change its groups and hooks. Viewers read, operators write; hook text is shown to and accepted
 * from admins only. The form is turned into the API's body so one schema names what is wrong. The
 * JSON twins are in routes/source-groups-api.ts; what both check is in
 * sources/source-group-requests.ts.
 */

import { KEEP_COUNT_KEYS, KEEP_WITHIN_KEYS } from "@fleetback/protocol";
import { Hono } from "hono";
import { Type } from "typebox";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, auditOf, hasRole, requireRole } from "../auth/actor.js";
import { freshnessJson, hostFreshness } from "../freshness/freshness.js";
import { requireHost } from "../hosts/require-host.js";
import { redirectAfterPost, renderPage } from "../http/render.js";
import { EmptyForm, readForm, validate } from "../http/validate.js";
import { hostPolicies } from "../policies/host-policies.js";
import { listPendingRuns, pendingRunJson } from "../retries/pending-runs.js";
import { scheduleTiming } from "../sources/cron-description.js";
import { openHook } from "../sources/hooks.js";
import { listSchedules, scheduleJson } from "../sources/schedules.js";
import { createGroupFor, runGroupNowFor, updateGroupFor } from "../sources/source-group-requests.js";
import { CreateGroupBody, HOOK_FIELDS, RunNowBody, UpdateGroupBody } from "../sources/source-group-schema.js";
import { deleteGroup, groupJson, listGroups, setHostHooks } from "../sources/source-groups.js";

const NUMBER_FIELD = Type.String({ pattern: "^[0-9]{0,7}$", description: "a whole number" });
const formFields: Record<string, ReturnType<typeof Type.Optional>> = {
  name: Type.Optional(Type.String({ maxLength: 200 })),
  includes: Type.Optional(Type.String({ maxLength: 1_000_000 })),
  excludes: Type.Optional(Type.String({ maxLength: 1_000_000 })),
  retry_max: Type.Optional(NUMBER_FIELD),
  retry_backoff_seconds: Type.Optional(NUMBER_FIELD),
  grace_seconds: Type.Optional(Type.String({ pattern: "^[0-9]{0,9}$", description: "a whole number" })),
  bandwidth_up_kbps: Type.Optional(NUMBER_FIELD),
  bandwidth_down_kbps: Type.Optional(NUMBER_FIELD),
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
const RunNowForm = Type.Object(
  { bandwidth_up_kbps: Type.Optional(NUMBER_FIELD), bandwidth_down_kbps: Type.Optional(NUMBER_FIELD) },
  { additionalProperties: false },
);

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
  // The field is always on the form: empty means the default grace, also when editing.
  if (form.grace_seconds !== undefined) {
    body.grace_seconds = form.grace_seconds.trim() === "" ? null : Number(form.grace_seconds);
  }
  // Always on the form too: empty means no cap of the group's own (the host's applies).
  for (const field of ["bandwidth_up_kbps", "bandwidth_down_kbps"] as const) {
    const value = form[field];
    if (value !== undefined) {
      body[field] = value.trim() === "" ? null : Number(value);
    }
  }
  for (const field of HOOK_FIELDS) {
    if (form[field] !== undefined) {
      body[field] = form[field];
    }
  }
  return body;
}

export function sourceGroupPageRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const viewer = requireRole("viewer");
  const operator = requireRole("operator");
  const admin = requireRole("admin");

  routes.get("/hosts/:id/sources", viewer, async (c) => {
    const hostId = c.req.param("id");
    const host = await requireHost(deps.db, hostId);
    const groups = await listGroups(deps.db, hostId);
    const schedules = await listSchedules(deps.db, hostId);
    const pending = await listPendingRuns(deps.db, hostId);
    const showHooks = hasRole(c.get("actor"), "admin");
    const names = Object.fromEntries(groups.map((group) => [group.id, group.name]));
    const freshness = await hostFreshness(deps, hostId);
    // Issue 37.2: where each group and schedule comes from, and what the policies give but do not apply.
    const policies = await hostPolicies(deps, hostId);
    const origin = new Map(policies.groups.map((group) => [group.name, group]));
    const policyNames = new Map(policies.matched.map((policy) => [policy.id, policy]));
    const scheduleZone = host.timeZone ?? deps.config.timeZone;
    const now = deps.clock.now();
    return renderPage(c, deps.views, "pages/host-sources.njk", {
      title: `${host.name}: sources`,
      host,
      connected: deps.hub.isOnline(hostId),
      groups: groups.map((group) => {
        const judged = freshness.get(group.id);
        return {
          ...groupJson(group, { showHooks, key: deps.keys.secret }),
          freshness: judged ? freshnessJson(judged) : null,
          from: group.policyId === null ? null : (origin.get(group.name)?.from ?? null),
          overridden: origin.get(group.name)?.overridden ?? [],
        };
      }),
      // Issue 17: each schedule as a sentence with its next runs, read in the host's zone.
      scheduleZone,
      schedules: schedules.map((schedule) => {
        const timing = scheduleTiming(schedule.cron, scheduleZone, now);
        const runs = schedule.enabled ? timing.next_runs : [];
        return {
          ...scheduleJson(schedule),
          ...timing,
          next_runs: runs,
          from:
            schedule.policyId === null
              ? null
              : {
                  name: policyNames.get(schedule.policyId)?.name ?? "a policy",
                  schedule: schedule.policySchedule,
                },
        };
      }),
      groupNames: names,
      policies,
      pendingRuns: pending.map(pendingRunJson),
      hostHooks: showHooks
        ? {
            pre: openHook(deps.keys.secret, hostId, host.preHookDefault, deps.log) ?? "",
            post: openHook(deps.keys.secret, hostId, host.postHookDefault, deps.log) ?? "",
          }
        : undefined,
      keepCountKeys: KEEP_COUNT_KEYS,
      keepWithinKeys: KEEP_WITHIN_KEYS,
      queued: c.req.query("queued"),
    });
  });
  routes.post("/hosts/:id/source-groups", operator, async (c) => {
    const form = await readForm(c, GroupForm);
    const body = validate(CreateGroupBody, groupBodyFromForm(form as Record<string, string | undefined>));
    await createGroupFor(deps, auditOf(c), c.req.param("id"), body);
    return redirectAfterPost(c, `/hosts/${c.req.param("id")}/sources`);
  });
  routes.post("/hosts/:id/source-groups/:gid", operator, async (c) => {
    const form = await readForm(c, GroupForm);
    const body = validate(UpdateGroupBody, groupBodyFromForm(form as Record<string, string | undefined>));
    await updateGroupFor(deps, auditOf(c), c.req.param("id"), c.req.param("gid"), body);
    return redirectAfterPost(c, `/hosts/${c.req.param("id")}/sources`);
  });
  routes.post("/hosts/:id/source-groups/:gid/delete", operator, async (c) => {
    await readForm(c, EmptyForm);
    await deleteGroup(deps, auditOf(c), c.req.param("id"), c.req.param("gid"));
    return redirectAfterPost(c, `/hosts/${c.req.param("id")}/sources`);
  });
  routes.post("/hosts/:id/source-groups/:gid/run", operator, async (c) => {
    const form = await readForm(c, RunNowForm);
    // Empty fields (the plain Run now button sends none) mean the group's own caps.
    const cap = (value: string | undefined) =>
      value === undefined || value.trim() === "" ? null : Number(value);
    const body = validate(RunNowBody, {
      bandwidth_up_kbps: cap(form.bandwidth_up_kbps),
      bandwidth_down_kbps: cap(form.bandwidth_down_kbps),
    });
    const outcome = await runGroupNowFor(deps, auditOf(c), c.req.param("id"), c.req.param("gid"), body);
    // A started backup goes straight to its live job page (issue 17); a queued one has no job
    // yet, so the sources page says it is queued.
    return redirectAfterPost(
      c,
      outcome.outcome === "queued"
        ? `/hosts/${c.req.param("id")}/sources?queued=${outcome.pendingRunId}`
        : `/jobs/${outcome.jobId}`,
    );
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
    await setHostHooks(deps, auditOf(c), hostId, form);
    return redirectAfterPost(c, `/hosts/${hostId}/sources`);
  });
  return routes;
}
