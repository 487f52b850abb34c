/**
 * @module routes/snapshots-pages
 * A host's snapshots page: its cached snapshot list, newest first, paged by a time+id cursor
 * (snapshots/snapshot-page.ts), and server-rendered charts of backup size and duration per source
 * group. The JSON list is in routes/snapshots-api.ts.
 */
import { Hono } from "hono";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, requireRole } from "../auth/actor.js";
import { renderPage } from "../http/render.js";
import { readQuery } from "../http/validate.js";
import { listBackupRuns } from "../snapshots/backup-history.js";
import { backupCharts } from "../snapshots/chart.js";
import { SnapshotsQuery, snapshotPage } from "../snapshots/snapshot-page.js";

export function snapshotPageRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const viewer = requireRole("viewer");

  routes.get("/hosts/:id/snapshots", viewer, async (c) => {
    const query = readQuery(c, SnapshotsQuery);
    const { host, found, nextBefore } = await snapshotPage(deps.db, c.req.param("id"), query);
    const charts = backupCharts(await listBackupRuns(deps.db, host.id));
    return renderPage(c, deps.views, "pages/host-snapshots.njk", {
      title: `${host.name}: snapshots`,
      host,
      snapshots: found,
      nextBefore,
      firstPage: query.before === undefined,
      sizeChart: charts.size,
      durationChart: charts.duration,
    });
  });
  return routes;
}
