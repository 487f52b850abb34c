/**
 * @module routes/maintenance-api
 * A host's repository maintenance cadences and repository stats in JSON. Viewers read, operators
 * write. The Maintenance tab is routes/maintenance-pages.ts.
 */
import { Hono } from "hono";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, auditOf, requireRole } from "../auth/actor.js";
import { requireHost } from "../hosts/require-host.js";
import { readJson } from "../http/validate.js";
import { lastDrillJson, lastDrillOf } from "../maintenance/last-drill.js";
import {
  MaintenanceBody,
  maintenanceJson,
  readMaintenance,
  updateMaintenance,
} from "../maintenance/maintenance-record.js";
import { readRepoStats, repoStatsJson } from "../snapshots/repo-stats.js";

export function maintenanceApiRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const viewer = requireRole("viewer");
  const operator = requireRole("operator");

  routes.get("/api/hosts/:id/maintenance", viewer, async (c) => {
    const now = deps.clock.now();
    const record = await readMaintenance(deps.db, c.req.param("id"), now);
    return c.json({
      maintenance: maintenanceJson(record, deps.config.timeZone, now),
      last_drill: lastDrillJson(await lastDrillOf(deps.db, record.hostId)),
    });
  });
  routes.put("/api/hosts/:id/maintenance", operator, async (c) => {
    const body = await readJson(c, MaintenanceBody);
    const record = await updateMaintenance(deps, auditOf(c), c.req.param("id"), body);
    return c.json({ maintenance: maintenanceJson(record, deps.config.timeZone, deps.clock.now()) });
  });
  routes.get("/api/hosts/:id/stats", viewer, async (c) => {
    const hostId = c.req.param("id");
    await requireHost(deps.db, hostId);
    return c.json({ stats: repoStatsJson(await readRepoStats(deps.db, hostId)) });
  });
  return routes;
}
