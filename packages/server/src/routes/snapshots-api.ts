/**
 * @module routes/snapshots-api
 * A host's cached snapshot list in JSON, newest first, paged by a time+id cursor and filtered by
 * `tag` or `group` (snapshots/snapshot-page.ts), and `POST /api/hosts/{id}/snapshots/{snapshot_id}/forget`
 * (admin): forgets that one snapshot (snapshots/forget-snapshot.ts) and answers the job's id.
 * The page with the charts is routes/snapshots-pages.ts.
 */
import { Hono } from "hono";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, auditOf, requireRole } from "../auth/actor.js";
import { invalid } from "../errors.js";
import { requireHost } from "../hosts/require-host.js";
import { readJson, readQuery } from "../http/validate.js";
import {
  confirms,
  ForgetSnapshotBody,
  forgetSnapshot,
  requireHostSnapshot,
} from "../snapshots/forget-snapshot.js";
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
      // The list holds other machines' snapshots of a shared repository too (issue 31).
      total: host.snapshotCount + host.otherSnapshotCount,
      next_before: nextBefore,
    });
  });

  routes.post("/api/hosts/:id/snapshots/:sid/forget", requireRole("admin"), async (c) => {
    const body = await readJson(c, ForgetSnapshotBody);
    const host = await requireHost(deps.db, c.req.param("id"));
    const snapshot = await requireHostSnapshot(deps.db, host.id, c.req.param("sid"));
    if (body.confirm !== undefined && !confirms(snapshot, body.confirm)) {
      throw invalid(`confirm: names another snapshot than ${snapshot.shortId}`);
    }
    const job = await forgetSnapshot(deps, host.id, snapshot.id, auditOf(c));
    return c.json({ job_id: job.id }, 201);
  });
  return routes;
}
