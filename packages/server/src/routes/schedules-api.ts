/**
 * @module routes/schedules-api
 * Schedules of a host as JSON. Each change bumps the host's schedule version in its transaction
 * and then pushes `schedule.set`; responses carry both the version and the version the agent
 * acknowledged, so a caller can say "agent has version N of M". The sources page's forms are in
 * routes/schedules-pages.ts.
 */
import { type Context, Hono } from "hono";
import { Type } from "typebox";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, auditOf, requireRole } from "../auth/actor.js";
import { requireHost } from "../hosts/require-host.js";
import { readJson } from "../http/validate.js";
import { scheduleTiming } from "../sources/cron-description.js";
import { changeSchedule } from "../sources/schedule-change.js";
import {
  createSchedule,
  deleteSchedule,
  listSchedules,
  type ScheduleView,
  scheduleJson,
  scheduleVersions,
  updateSchedule,
} from "../sources/schedules.js";

export const ScheduleBody = Type.Object(
  {
    cron: Type.String({ maxLength: 200 }),
    enabled: Type.Optional(Type.Boolean()),
    source_group_ids: Type.Array(Type.String({ maxLength: 64 }), { maxItems: 1000 }),
  },
  { additionalProperties: false },
);

export function scheduleApiRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const viewer = requireRole("viewer");
  const operator = requireRole("operator");

  /**
   * A schedule with how it reads (issue 17): `description` (an English sentence, or null for an
   * uncommon shape), `next_runs` (the next three fires; none when disabled) and `time_zone` (the
   * host's reported zone, else FLEETBACK_TZ), as the sources page shows them.
   */
  async function withTiming(hostId: string) {
    const host = await requireHost(deps.db, hostId);
    const zone = host.timeZone ?? deps.config.timeZone;
    const now = deps.clock.now();
    return (schedule: ScheduleView) => {
      const timing = scheduleTiming(schedule.cron, zone, now);
      return {
        ...scheduleJson(schedule),
        ...timing,
        next_runs: schedule.enabled ? timing.next_runs : [],
      };
    };
  }

  async function answer(
    c: Context<AppEnv>,
    result: { schedule: ScheduleView; pushed: boolean },
    status: 200 | 201,
  ) {
    const hostId = c.req.param("id") ?? "";
    const versions = await scheduleVersions(deps.db, hostId);
    const json = await withTiming(hostId);
    return c.json({ schedule: json(result.schedule), pushed: result.pushed, ...versions }, status);
  }

  routes.get("/api/hosts/:id/schedules", viewer, async (c) => {
    const hostId = c.req.param("id");
    const schedules = await listSchedules(deps.db, hostId);
    const json = await withTiming(hostId);
    return c.json({ schedules: schedules.map(json), ...(await scheduleVersions(deps.db, hostId)) });
  });
  routes.post("/api/hosts/:id/schedules", operator, async (c) => {
    const body = await readJson(c, ScheduleBody);
    const hostId = c.req.param("id");
    const audit = auditOf(c);
    return answer(
      c,
      await changeSchedule(deps, hostId, () => createSchedule(deps, audit, hostId, body)),
      201,
    );
  });
  routes.put("/api/hosts/:id/schedules/:sid", operator, async (c) => {
    const body = await readJson(c, ScheduleBody);
    const hostId = c.req.param("id");
    const sid = c.req.param("sid");
    const audit = auditOf(c);
    return answer(
      c,
      await changeSchedule(deps, hostId, () => updateSchedule(deps, audit, hostId, sid, body)),
      200,
    );
  });
  routes.delete("/api/hosts/:id/schedules/:sid", operator, async (c) => {
    const hostId = c.req.param("id");
    const sid = c.req.param("sid");
    const audit = auditOf(c);
    await changeSchedule(deps, hostId, () => deleteSchedule(deps, audit, hostId, sid));
    return c.json(await scheduleVersions(deps.db, hostId));
  });
  return routes;
}
