/**
 * @module routes/snapshots-api
 * A host's cached snapshot list in JSON, newest first, paged by a time+id cursor
 * (snapshots/snapshot-page.ts). The page with the charts is routes/snapshots-pages.ts.
 */
import { Hono } from "hono";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, requireRole } from "../auth/actor.js";
import { readQuery } from "../http/validate.js";
import { SnapshotsQuery, snapshotPage } from "../snapshots/snapshot-page.js";
import { snapshotJson } from "../snapshots/snapshot-store.js";

export function snapshotApiRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const viewer = requireRole("viewer");

  routes.get("/api/hosts/:id/snapshots", viewer, async (c) => {
    const { host, found, nextBefore } = await snapshotPage(
      deps.db,
      c.req.param("id"),
      readQuery(c, SnapshotsQuery),
    );
    return c.json({
      snapshots: found.map(snapshotJson),
      refreshed_at: host.snapshotsRefreshedAt,
      total: host.snapshotCount,
      next_before: nextBefore,
    });
  });
  return routes;
}
