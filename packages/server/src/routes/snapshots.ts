/**
 * @module routes/snapshots
 * A host's cached snapshot list (JSON and page, newest first, paged by a time+id cursor) and the
 * page's server-rendered charts of backup size and duration per source group.
 */
import { type Database, type Host, hosts } from "@fleetback/db";
import { eq } from "drizzle-orm";
import { Hono } from "hono";
import { Type } from "typebox";
import type { AppDeps } from "../app.js";
import { type AppEnv, requireRole } from "../auth/actor.js";
import { RequestError } from "../errors.js";
import { renderPage } from "../http/render.js";
import { readQuery } from "../http/validate.js";
import { listBackupRuns } from "../snapshots/backup-history.js";
import { backupCharts } from "../snapshots/chart.js";
import {
  decodeCursor,
  encodeCursor,
  listSnapshots,
  type SnapshotCursor,
  snapshotJson,
} from "../snapshots/snapshot-store.js";

export const SNAPSHOT_PAGE_DEFAULT = 50;
export const SNAPSHOT_PAGE_MAX = 500;

const SnapshotsQuery = Type.Object(
  {
    limit: Type.Optional(Type.String({ pattern: "^[1-9][0-9]{0,2}$" })),
    before: Type.Optional(Type.String({ minLength: 3, maxLength: 200 })),
  },
  { additionalProperties: false },
);

async function findHost(db: Database, hostId: string): Promise<Host> {
  const [host] = await db.select().from(hosts).where(eq(hosts.id, hostId)).limit(1);
  if (!host) {
    throw new RequestError("not_found", `No host ${hostId}`);
  }
  return host;
}

function pageQuery(query: { limit?: string | undefined; before?: string | undefined }) {
  const limit = Math.min(Number(query.limit ?? SNAPSHOT_PAGE_DEFAULT), SNAPSHOT_PAGE_MAX);
  let before: SnapshotCursor | undefined;
  if (query.before !== undefined) {
    before = decodeCursor(query.before);
    if (!before) {
      throw new RequestError("invalid", "before: must be a cursor from a previous page's next_before");
    }
  }
  return { limit, before };
}

export function snapshotRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const viewer = requireRole("viewer");

  async function page(hostId: string, query: { limit?: string | undefined; before?: string | undefined }) {
    const host = await findHost(deps.db, hostId);
    const { limit, before } = pageQuery(query);
    const found = await listSnapshots(deps.db, host.id, { limit, before });
    const last = found.at(-1);
    return {
      host,
      found,
      limit,
      nextBefore: found.length === limit && last ? encodeCursor(last) : undefined,
    };
  }

  routes.get("/api/hosts/:id/snapshots", viewer, async (c) => {
    const { host, found, nextBefore } = await page(c.req.param("id"), readQuery(c, SnapshotsQuery));
    return c.json({
      snapshots: found.map(snapshotJson),
      refreshed_at: host.snapshotsRefreshedAt,
      total: host.snapshotCount,
      next_before: nextBefore,
    });
  });

  routes.get("/hosts/:id/snapshots", viewer, async (c) => {
    const query = readQuery(c, SnapshotsQuery);
    const { host, found, nextBefore } = await page(c.req.param("id"), query);
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
