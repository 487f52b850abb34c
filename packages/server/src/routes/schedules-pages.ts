/**
 * @module routes/schedules-pages
 * The sources page's schedule forms: create, change and delete a schedule, then back to the page.
 * Each change bumps the host's schedule version and pushes `schedule.set` as the JSON twins in
 * routes/schedules-api.ts do.
 */
import { Hono } from "hono";
import { Type } from "typebox";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, auditOf, requireRole } from "../auth/actor.js";
import { redirectAfterPost } from "../http/render.js";
import { EmptyForm, readForm } from "../http/validate.js";
import { changeSchedule } from "../sources/schedule-change.js";
import { createSchedule, deleteSchedule, type ScheduleInput, updateSchedule } from "../sources/schedules.js";

const ScheduleForm = Type.Object(
  {
    cron: Type.String({ maxLength: 200 }),
    enabled: Type.Optional(Type.String({ maxLength: 8 })),
    source_group_ids: Type.Optional(
      Type.Union([
        Type.String({ maxLength: 64 }),
        Type.Array(Type.String({ maxLength: 64 }), { maxItems: 1000 }),
      ]),
    ),
  },
  { additionalProperties: false },
);

function inputFromForm(form: {
  cron: string;
  enabled?: string;
  source_group_ids?: string | string[];
}): ScheduleInput {
  const ids = form.source_group_ids;
  return {
    cron: form.cron,
    enabled: form.enabled !== undefined && form.enabled !== "",
    source_group_ids: ids === undefined ? [] : Array.isArray(ids) ? ids : [ids],
  };
}

export function schedulePageRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const operator = requireRole("operator");

  routes.post("/hosts/:id/schedules", operator, async (c) => {
    const input = inputFromForm(await readForm(c, ScheduleForm));
    const hostId = c.req.param("id");
    const audit = auditOf(c);
    await changeSchedule(deps, hostId, () => createSchedule(deps, audit, hostId, input));
    return redirectAfterPost(c, `/hosts/${hostId}/sources`);
  });
  routes.post("/hosts/:id/schedules/:sid", operator, async (c) => {
    const input = inputFromForm(await readForm(c, ScheduleForm));
    const hostId = c.req.param("id");
    const sid = c.req.param("sid");
    const audit = auditOf(c);
    await changeSchedule(deps, hostId, () => updateSchedule(deps, audit, hostId, sid, input));
    return redirectAfterPost(c, `/hosts/${hostId}/sources`);
  });
  routes.post("/hosts/:id/schedules/:sid/delete", operator, async (c) => {
    await readForm(c, EmptyForm);
    const hostId = c.req.param("id");
    const sid = c.req.param("sid");
    const audit = auditOf(c);
    await changeSchedule(deps, hostId, () => deleteSchedule(deps, audit, hostId, sid));
    return redirectAfterPost(c, `/hosts/${hostId}/sources`);
  });
  return routes;
}
