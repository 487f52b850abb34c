/**
 * @module routes/schedules
 * Schedules of a host (JSON and the sources page's forms). Each change bumps the host's schedule
 * version in its transaction and then pushes `schedule.set`; responses carry both the version and
 * the version the agent acknowledged, so the page can say "agent has version N of M".
 */
import { type Context, Hono } from "hono";
import { Type } from "typebox";
import type { AppDeps } from "../app.js";
import { writeAudit } from "../audit/audit.js";
import { type Actor, type AppEnv, requireRole } from "../auth/actor.js";
import { RequestError } from "../errors.js";
import { pushScheduleSet } from "../hosts/host-push.js";
import { clientIp, redirectAfterPost } from "../http/render.js";
import { readForm, readJson } from "../http/validate.js";
import {
  createSchedule,
  deleteSchedule,
  listSchedules,
  type ScheduleInput,
  type ScheduleView,
  scheduleJson,
  scheduleVersions,
  updateSchedule,
} from "../sources/schedules.js";

const ScheduleBody = Type.Object(
  {
    cron: Type.String({ maxLength: 200 }),
    enabled: Type.Optional(Type.Boolean()),
    source_group_ids: Type.Array(Type.String({ maxLength: 64 }), { maxItems: 1000 }),
  },
  { additionalProperties: false },
);
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
const EmptyForm = Type.Object({}, { additionalProperties: false });

function actorOf(c: Context<AppEnv>): Actor {
  const actor = c.get("actor");
  if (!actor) {
    throw new RequestError("unauthorised", "Sign in first.");
  }
  return actor;
}

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

export function scheduleRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const viewer = requireRole("viewer");
  const operator = requireRole("operator");

  /** Runs one change, audits it, then pushes the new set (after the change committed). */
  async function change(
    c: Context<AppEnv>,
    action: string,
    run: (hostId: string) => Promise<ScheduleView>,
  ): Promise<{ schedule: ScheduleView; pushed: boolean }> {
    const hostId = c.req.param("id") ?? "";
    const schedule = await run(hostId);
    await writeAudit(deps.db, deps.clock, {
      actor: actorOf(c),
      action,
      targetKind: "schedule",
      targetId: schedule.id,
      details: { host_id: hostId, cron: schedule.cron, enabled: schedule.enabled },
      ip: clientIp(c),
    });
    const pushed = await pushScheduleSet(deps, hostId);
    return { schedule, pushed };
  }

  async function answer(
    c: Context<AppEnv>,
    result: { schedule: ScheduleView; pushed: boolean },
    status: 200 | 201,
  ) {
    const versions = await scheduleVersions(deps.db, c.req.param("id") ?? "");
    return c.json({ schedule: scheduleJson(result.schedule), pushed: result.pushed, ...versions }, status);
  }

  routes.get("/api/hosts/:id/schedules", viewer, async (c) => {
    const hostId = c.req.param("id");
    const schedules = await listSchedules(deps.db, hostId);
    return c.json({ schedules: schedules.map(scheduleJson), ...(await scheduleVersions(deps.db, hostId)) });
  });
  routes.post("/api/hosts/:id/schedules", operator, async (c) => {
    const body = await readJson(c, ScheduleBody);
    return answer(c, await change(c, "schedule.create", (hostId) => createSchedule(deps, hostId, body)), 201);
  });
  routes.put("/api/hosts/:id/schedules/:sid", operator, async (c) => {
    const body = await readJson(c, ScheduleBody);
    const sid = c.req.param("sid");
    return answer(
      c,
      await change(c, "schedule.update", (hostId) => updateSchedule(deps, hostId, sid, body)),
      200,
    );
  });
  routes.delete("/api/hosts/:id/schedules/:sid", operator, async (c) => {
    const sid = c.req.param("sid");
    await change(c, "schedule.delete", (hostId) => deleteSchedule(deps, hostId, sid));
    return c.json(await scheduleVersions(deps.db, c.req.param("id")));
  });

  routes.post("/hosts/:id/schedules", operator, async (c) => {
    const input = inputFromForm(await readForm(c, ScheduleForm));
    await change(c, "schedule.create", (hostId) => createSchedule(deps, hostId, input));
    return redirectAfterPost(c, `/hosts/${c.req.param("id")}/sources`);
  });
  routes.post("/hosts/:id/schedules/:sid", operator, async (c) => {
    const input = inputFromForm(await readForm(c, ScheduleForm));
    const sid = c.req.param("sid");
    await change(c, "schedule.update", (hostId) => updateSchedule(deps, hostId, sid, input));
    return redirectAfterPost(c, `/hosts/${c.req.param("id")}/sources`);
  });
  routes.post("/hosts/:id/schedules/:sid/delete", operator, async (c) => {
    await readForm(c, EmptyForm);
    const sid = c.req.param("sid");
    await change(c, "schedule.delete", (hostId) => deleteSchedule(deps, hostId, sid));
    return redirectAfterPost(c, `/hosts/${c.req.param("id")}/sources`);
  });
  return routes;
}
