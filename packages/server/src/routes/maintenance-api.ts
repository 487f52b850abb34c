/**
 * @module routes/maintenance-api
 * A host's repository maintenance cadences and repository stats in JSON. Viewers read, operators
 * write. The Maintenance tab is routes/maintenance-pages.ts.
 */

import type { Hono } from "hono";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, auditOf } from "../auth/actor.js";
import { requireHost } from "../hosts/require-host.js";
import { lastDrillJson, lastDrillOf } from "../maintenance/last-drill.js";
import {
  MaintenanceBody,
  maintenanceJson,
  readMaintenance,
  updateMaintenance,
} from "../maintenance/maintenance-record.js";
import { apiGroup, HOST_ID } from "../openapi/api-route.js";
import { MaintenanceAnswer, MaintenanceWithDrill, RepoStatsAnswer } from "../openapi/repository-schemas.js";
import { readRepoStats, repoStatsJson } from "../snapshots/repo-stats.js";

export const MAINTENANCE_API = apiGroup<AppDeps>({ tag: "Maintenance" });

MAINTENANCE_API.add({
  id: "getMaintenance",
  method: "get",
  path: "/api/hosts/:id/maintenance",
  summary: "The host's forget, prune, check and drill cadences and its last restore drill",
  description: "Created with the defaults when the host has none yet.",
  access: "viewer",
  params: HOST_ID,
  responses: { 200: { description: "The cadences.", schema: MaintenanceWithDrill } },
  handler: async (c, _input, deps) => {
    const now = deps.clock.now();
    const record = await readMaintenance(deps.db, c.req.param("id"), now);
    return c.json({
      maintenance: maintenanceJson(record, deps.config.timeZone, now),
      last_drill: lastDrillJson(await lastDrillOf(deps.db, record.hostId)),
    });
  },
});

MAINTENANCE_API.add({
  id: "putMaintenance",
  method: "put",
  path: "/api/hosts/:id/maintenance",
  summary: "Change the maintenance cadences",
  access: "operator",
  params: HOST_ID,
  body: MaintenanceBody,
  responses: { 200: { description: "The cadences as changed.", schema: MaintenanceAnswer } },
  handler: async (c, { body }, deps) => {
    const record = await updateMaintenance(deps, auditOf(c), c.req.param("id"), body);
    return c.json({ maintenance: maintenanceJson(record, deps.config.timeZone, deps.clock.now()) });
  },
});

MAINTENANCE_API.add({
  id: "getRepoStats",
  method: "get",
  path: "/api/hosts/:id/stats",
  summary: "The repository's size, counts and last check, as the agent last reported them",
  access: "viewer",
  params: HOST_ID,
  responses: {
    200: { description: "The stats; null fields were never reported.", schema: RepoStatsAnswer },
  },
  handler: async (c, _input, deps) => {
    const hostId = c.req.param("id");
    await requireHost(deps.db, hostId);
    return c.json({ stats: repoStatsJson(await readRepoStats(deps.db, hostId)) });
  },
});

export function maintenanceApiRoutes(deps: AppDeps): Hono<AppEnv> {
  return MAINTENANCE_API.routes(deps);
}
