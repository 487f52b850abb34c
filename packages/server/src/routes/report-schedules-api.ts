/**
 * @module routes/report-schedules-api
 * Scheduled evidence reports as JSON (issue 39.3; admins only, since they mail the fleet's
 * history to outside addresses): list, create, change, delete. The settings page's forms are in
 * routes/notification-channels-pages.ts.
 */
import type { Hono } from "hono";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, auditOf } from "../auth/actor.js";
import { actOnPathId, apiGroup, NO_CONTENT } from "../openapi/api-route.js";
import { ReportScheduleAnswer, ReportScheduleList } from "../openapi/evidence-schemas.js";
import {
  createReportSchedule,
  deleteReportSchedule,
  listReportSchedules,
  NewReportScheduleBody,
  ReportScheduleChange,
  reportScheduleJson,
  updateReportSchedule,
} from "../reports/report-schedules.js";

const ABOUT =
  "The evidence report for the last period (weekly: the seven UTC days before the sending day; monthly, sent on the 1st: the previous month), mailed at a local time (FLEETBACK_TZ) through an email channel's SMTP server to `recipients`, with the CSV attached (linked instead past 5 MiB).";

export const REPORT_SCHEDULE_API = apiGroup<AppDeps>({ tag: "Reports" });

REPORT_SCHEDULE_API.add({
  id: "listReportSchedules",
  method: "get",
  path: "/api/reports/schedules",
  summary: "List scheduled evidence reports",
  access: "admin",
  responses: { 200: { description: "Every schedule.", schema: ReportScheduleList } },
  handler: async (c, _input, deps) =>
    c.json({ report_schedules: (await listReportSchedules(deps.db)).map(reportScheduleJson) }),
});

REPORT_SCHEDULE_API.add({
  id: "createReportSchedule",
  method: "post",
  path: "/api/reports/schedules",
  summary: "Mail the evidence report on a schedule",
  description: ABOUT,
  access: "admin",
  body: NewReportScheduleBody,
  responses: { 201: { description: "The new schedule.", schema: ReportScheduleAnswer } },
  errors: { 409: "A schedule with that name exists." },
  handler: async (c, { body }, deps) => {
    const row = await createReportSchedule(deps, auditOf(c), body);
    return c.json({ report_schedule: reportScheduleJson(row) }, 201);
  },
});

REPORT_SCHEDULE_API.add({
  id: "updateReportSchedule",
  method: "put",
  path: "/api/reports/schedules/:id",
  summary: "Change a scheduled evidence report",
  description: "Fields left out keep their value; a changed time counts from now.",
  access: "admin",
  body: ReportScheduleChange,
  responses: { 200: { description: "The schedule as changed.", schema: ReportScheduleAnswer } },
  errors: { 409: "A schedule with that name exists." },
  handler: async (c, { body }, deps) => {
    const row = await updateReportSchedule(deps, auditOf(c), c.req.param("id"), body);
    return c.json({ report_schedule: reportScheduleJson(row) });
  },
});

REPORT_SCHEDULE_API.add({
  id: "deleteReportSchedule",
  method: "delete",
  path: "/api/reports/schedules/:id",
  summary: "Stop a scheduled evidence report",
  access: "admin",
  responses: NO_CONTENT,
  handler: actOnPathId(deleteReportSchedule),
});

export function reportScheduleApiRoutes(deps: AppDeps): Hono<AppEnv> {
  return REPORT_SCHEDULE_API.routes(deps);
}
