/**
 * @module routes/snapshots-pages
 * A host's snapshots page: its cached snapshot list, newest first, paged by a time+id cursor and
 * filtered by tag or source group (snapshots/snapshot-page.ts), the compare form preset to the two
 * newest snapshots of one group (snapshots/diff-pair.ts), and server-rendered charts of data added
 * and duration per backup and of the repository's size. An admin forgets one snapshot through a
 * confirmation page that asks for its short id (works without JavaScript); the job page follows.
 * The JSON list is in routes/snapshots-api.ts.
 */
import { Hono } from "hono";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, auditOf, requireRole } from "../auth/actor.js";
import { isRequestError } from "../errors.js";
import { requireHost } from "../hosts/require-host.js";
import { redirectAfterPost, renderPage } from "../http/render.js";
import { readForm, readQuery } from "../http/validate.js";
import {
  confirms,
  ForgetSnapshotForm,
  forgetSnapshot,
  requireHostSnapshot,
  speaksForgetSnapshots,
} from "../maintenance/forget-snapshot.js";
import { listBackupRuns, listRepositorySizes, repositorySizeRange } from "../snapshots/backup-history.js";
import { backupCharts } from "../snapshots/chart.js";
import { defaultDiffPair } from "../snapshots/diff-pair.js";
import { SnapshotsQuery, snapshotPage } from "../snapshots/snapshot-page.js";
import { listSnapshotTags } from "../snapshots/snapshot-store.js";

/** The query string of a filtered list, for the pager's links. */
function filterQuery(filter: { tag?: string | undefined; group?: string | undefined }): string {
  const params = new URLSearchParams();
  if (filter.tag) {
    params.set("tag", filter.tag);
  }
  if (filter.group) {
    params.set("group", filter.group);
  }
  return params.toString();
}

export function snapshotPageRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const viewer = requireRole("viewer");
  const admin = requireRole("admin");

  routes.get("/hosts/:id/snapshots", viewer, async (c) => {
    const query = readQuery(c, SnapshotsQuery);
    const { host, found, nextBefore, groups, filter } = await snapshotPage(deps.db, c.req.param("id"), query);
    const firstPage = query.before === undefined;
    const charts = firstPage
      ? backupCharts(
          await listBackupRuns(deps.db, host.id),
          await listRepositorySizes(deps.db, host.id, deps.clock.now()),
          repositorySizeRange(deps.clock.now()),
        )
      : undefined;
    const pair = defaultDiffPair(found, groups);
    return renderPage(c, deps.views, "pages/host-snapshots.njk", {
      title: `${host.name}: snapshots`,
      host,
      snapshots: found,
      nextBefore,
      firstPage,
      charts,
      groups,
      tags: await listSnapshotTags(deps.db, host.id),
      filter,
      filterQuery: filterQuery(filter),
      diffPair: pair ?? { b: found[0]?.id, a: found[1]?.id },
    });
  });

  routes.get("/hosts/:id/snapshots/:sid/forget", admin, async (c) => {
    const host = await requireHost(deps.db, c.req.param("id"));
    const snapshot = await requireHostSnapshot(deps.db, host.id, c.req.param("sid"));
    return renderPage(c, deps.views, "pages/snapshot-forget.njk", {
      title: `${host.name}: forget snapshot ${snapshot.shortId}`,
      host,
      snapshot,
      agentTooOld: !speaksForgetSnapshots(host.protocolVersion),
    });
  });

  routes.post("/hosts/:id/snapshots/:sid/forget", admin, async (c) => {
    const host = await requireHost(deps.db, c.req.param("id"));
    const snapshot = await requireHostSnapshot(deps.db, host.id, c.req.param("sid"));
    const form = await readForm(c, ForgetSnapshotForm);
    const page = (error: string, status: 400 | 409 | 503) =>
      renderPage(
        c,
        deps.views,
        "pages/snapshot-forget.njk",
        {
          title: `${host.name}: forget snapshot ${snapshot.shortId}`,
          host,
          snapshot,
          agentTooOld: !speaksForgetSnapshots(host.protocolVersion),
          error,
          typed: form.confirm,
        },
        status,
      );
    if (!confirms(snapshot, form.confirm)) {
      return page(`confirm: type ${snapshot.shortId} to forget this snapshot`, 400);
    }
    try {
      const job = await forgetSnapshot(deps, host.id, snapshot.id, auditOf(c));
      return redirectAfterPost(c, `/jobs/${job.id}`);
    } catch (error) {
      if (isRequestError(error) && (error.code === "conflict" || error.code === "unavailable")) {
        return page(error.message, error.code === "conflict" ? 409 : 503);
      }
      throw error;
    }
  });
  return routes;
}
