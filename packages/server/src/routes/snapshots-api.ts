/**
 * @module routes/snapshots-api
 * A host's cached snapshot list in JSON, newest first, paged by a time+id cursor and filtered by
 * `tag` or `group` (snapshots/snapshot-page.ts), and `POST /api/hosts/{id}/snapshots/{snapshot_id}/forget`
 * (admin): forgets that one snapshot (snapshots/forget-snapshot.ts) and answers the job's id.
 * The page with the charts is routes/snapshots-pages.ts.
 */

import type { Hono } from "hono";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, auditOf } from "../auth/actor.js";
import { invalid } from "../errors.js";
import { requireHost } from "../hosts/require-host.js";
import { readQuery } from "../http/validate.js";
import {
  confirms,
  ForgetSnapshotBody,
  forgetSnapshot,
  requireHostSnapshot,
} from "../maintenance/forget-snapshot.js";
import { apiGroup, HOST_ID, OFFLINE } from "../openapi/api-route.js";
import { JobStarted } from "../openapi/job-schemas.js";
import { SnapshotPage } from "../openapi/repository-schemas.js";
import { SnapshotsQuery, snapshotPage } from "../snapshots/snapshot-page.js";
import { snapshotJson } from "../snapshots/snapshot-store.js";

export const SNAPSHOT_API = apiGroup<AppDeps>({ tag: "Snapshots" });

SNAPSHOT_API.add({
  id: "listSnapshots",
  method: "get",
  path: "/api/hosts/:id/snapshots",
  summary: "The host's cached snapshots, newest first",
  description: "Filtered by `tag` or source `group` (name); an empty filter means none.",
  access: "viewer",
  params: HOST_ID,
  query: SnapshotsQuery,
  responses: { 200: { description: "A page of snapshots.", schema: SnapshotPage } },
  handler: async (c, _input, deps) => {
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
  },
});

SNAPSHOT_API.add({
  id: "forgetSnapshot",
  method: "post",
  path: "/api/hosts/:id/snapshots/:sid/forget",
  summary: "Forget one snapshot",
  description: "`confirm`, when given, must name the same snapshot (its short or full id).",
  access: "admin",
  params: { id: "The host's id.", sid: "The snapshot's full id." },
  body: ForgetSnapshotBody,
  responses: { 201: { description: "The forget job.", schema: JobStarted } },
  errors: { 409: "The host's agent is too old to forget one snapshot.", 503: OFFLINE },
  handler: async (c, { body }, deps) => {
    const host = await requireHost(deps.db, c.req.param("id"));
    const snapshot = await requireHostSnapshot(deps.db, host.id, c.req.param("sid"));
    if (body.confirm !== undefined && !confirms(snapshot, body.confirm)) {
      throw invalid(`confirm: names another snapshot than ${snapshot.shortId}`);
    }
    const job = await forgetSnapshot(deps, host.id, snapshot.id, auditOf(c));
    return c.json({ job_id: job.id }, 201);
  },
});

export function snapshotApiRoutes(deps: AppDeps): Hono<AppEnv> {
  return SNAPSHOT_API.routes(deps);
}
