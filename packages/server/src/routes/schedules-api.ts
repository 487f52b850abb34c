/**
 * @module routes/schedules-api
 * Schedules of a host as JSON. Each change bumps the host's schedule version in its transaction
 * and then pushes `schedule.set`; responses carry both the version and the version the agent
 * acknowledged, so a caller can say "agent has version N of M". The sources page's forms are in
 * routes/schedules-pages.ts.
 */

import type { Context, Hono } from "hono";
import { Type } from "typebox";
import type { AppDeps } from "../app-deps.js";
import type { AuditContext } from "../audit/audit.js";
import { type AppEnv, auditOf } from "../auth/actor.js";
import { requireHost } from "../hosts/require-host.js";
import { apiGroup, HOST_ID } from "../openapi/api-route.js";
import { ScheduleAnswer, ScheduleList, ScheduleVersions } from "../openapi/source-schemas.js";
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

const SCHEDULE = { id: "The host's id.", sid: "The schedule's id." };

/** The schedule routes' helpers: each answer shows a schedule as the sources page reads it. */
function scheduleContext(deps: AppDeps) {
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

  /** Makes the change (the host's schedule set is pushed after it) and answers the schedule. */
  async function answerChange(
    c: Context<AppEnv>,
    change: (hostId: string, audit: AuditContext) => Promise<ScheduleView>,
    status: 200 | 201,
  ) {
    const hostId = c.req.param("id") ?? "";
    const audit = auditOf(c);
    const result = await changeSchedule(deps, hostId, () => change(hostId, audit));
    const versions = await scheduleVersions(deps.db, hostId);
    const json = await withTiming(hostId);
    return c.json({ schedule: json(result.schedule), pushed: result.pushed, ...versions }, status);
  }

  return { deps, withTiming, answerChange };
}

type ScheduleContext = ReturnType<typeof scheduleContext>;

export const SCHEDULE_API = apiGroup<ScheduleContext>({ tag: "Schedules" });

SCHEDULE_API.add({
  id: "listSchedules",
  method: "get",
  path: "/api/hosts/:id/schedules",
  summary: "A host's schedules, with their next runs and the version the agent applied",
  access: "viewer",
  params: HOST_ID,
  responses: { 200: { description: "The schedules.", schema: ScheduleList } },
  handler: async (c, _input, { deps, withTiming }) => {
    const hostId = c.req.param("id");
    const schedules = await listSchedules(deps.db, hostId);
    const json = await withTiming(hostId);
    return c.json({ schedules: schedules.map(json), ...(await scheduleVersions(deps.db, hostId)) });
  },
});

SCHEDULE_API.add({
  id: "createSchedule",
  method: "post",
  path: "/api/hosts/:id/schedules",
  summary: "Add a schedule",
  description: "`source_group_ids` must name groups of this host. The agent is sent the new schedule set.",
  access: "operator",
  params: HOST_ID,
  body: ScheduleBody,
  responses: { 201: { description: "The new schedule.", schema: ScheduleAnswer } },
  handler: (c, { body }, { deps, answerChange }) =>
    answerChange(c, (hostId, audit) => createSchedule(deps, audit, hostId, body), 201),
});

SCHEDULE_API.add({
  id: "updateSchedule",
  method: "put",
  path: "/api/hosts/:id/schedules/:sid",
  summary: "Replace a schedule",
  access: "operator",
  params: SCHEDULE,
  body: ScheduleBody,
  responses: { 200: { description: "The schedule as changed.", schema: ScheduleAnswer } },
  handler: (c, { body }, { deps, answerChange }) =>
    answerChange(c, (hostId, audit) => updateSchedule(deps, audit, hostId, c.req.param("sid"), body), 200),
});

SCHEDULE_API.add({
  id: "deleteSchedule",
  method: "delete",
  path: "/api/hosts/:id/schedules/:sid",
  summary: "Delete a schedule",
  access: "operator",
  params: SCHEDULE,
  responses: {
    200: { description: "The host's schedule versions after the change.", schema: ScheduleVersions },
  },
  handler: async (c, _input, { deps }) => {
    const hostId = c.req.param("id");
    const sid = c.req.param("sid");
    const audit = auditOf(c);
    await changeSchedule(deps, hostId, () => deleteSchedule(deps, audit, hostId, sid));
    return c.json(await scheduleVersions(deps.db, hostId));
  },
});

export function scheduleApiRoutes(deps: AppDeps): Hono<AppEnv> {
  return SCHEDULE_API.routes(scheduleContext(deps));
}
