/**
 * @module routes/job-pages
 * The job page with its live stream and cancel form, and a host's job list with filters.
 */
import { type Database, hosts, JOB_KINDS, JOB_STATUSES } from "@fleetback/db";
import { eq } from "drizzle-orm";
import { Hono } from "hono";
import { Type } from "typebox";
import { restoreRefusal } from "../alerts/restore-refusal.js";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, auditOf, requireRole } from "../auth/actor.js";
import { errorBody, RequestError } from "../errors.js";
import { hostNameOf } from "../hosts/host-name.js";
import { nextBefore } from "../http/next-before.js";
import { redirectAfterPost, renderPage } from "../http/render.js";
import { readQuery } from "../http/validate.js";
import { stoppedView } from "../job-page/job-stopped.js";
import { STREAM_AUTHORISED_STATUS } from "../job-page/job-stream.js";
import { type JobView, loadJobView } from "../job-page/job-view.js";
import { cancelJob } from "../jobs/cancel-job.js";
import { getJob, listJobs } from "../jobs/job-queries.js";
import { loadOutage } from "../repository-outage/repository-outage.js";
import { loadDiffView } from "../restore/diff-view.js";

export const HOST_JOBS_PAGE = 50;

const Ulid = Type.String({ pattern: "^[0-9A-HJKMNP-TV-Z]{26}$" });
const Empty = Type.Literal("");
const HostJobsQuery = Type.Object(
  {
    status: Type.Optional(Type.Union([Empty, ...JOB_STATUSES.map((s) => Type.Literal(s))])),
    kind: Type.Optional(Type.Union([Empty, ...JOB_KINDS.map((k) => Type.Literal(k))])),
    before: Type.Optional(Ulid),
  },
  { additionalProperties: false },
);

async function findHost(db: Database, hostId: string) {
  const [host] = await db.select().from(hosts).where(eq(hosts.id, hostId)).limit(1);
  if (!host) {
    throw new RequestError("not_found", `No host ${hostId}`);
  }
  return host;
}

async function hostRef(db: AppDeps["db"], hostId: string): Promise<{ id: string; name: string }> {
  return { id: hostId, name: await hostNameOf(db, hostId) };
}

/**
 * Bytes a second since the job started, until the live stream measures its own. None once restic
 * has read everything: what it read is no longer what moves.
 */
function averageRate(view: JobView, now: Date): number | undefined {
  const started = view.job.startedAt;
  const done = view.progress?.bytesDone;
  if (!view.active || !started || done === undefined || view.progress?.finishing) {
    return undefined;
  }
  const seconds = (now.getTime() - started.getTime()) / 1000;
  return seconds > 0 ? Math.round(done / seconds) : undefined;
}

export function jobPageRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const viewer = requireRole("viewer");
  const operator = requireRole("operator");

  routes.get("/jobs/:id", viewer, async (c) => {
    const view = await loadJobView(deps.db, c.req.param("id"));
    const refusal = restoreRefusal(view.job);
    // Refused before restic ran: there is no progress to show, however the bar last stood.
    const progress = refusal ? undefined : view.progress;
    return renderPage(c, deps.views, "pages/job.njk", {
      title: `${view.job.kind} job on ${view.host.name}`,
      ...view,
      progress,
      averageRate: averageRate(view, deps.clock.now()),
      stopped: await stoppedView(deps.db, view.job, progress, refusal !== undefined),
      // renderPage's own `actor` (the signed-in user, for the navigation) would shadow the view's.
      startedBy: view.actor,
      diff: view.job.kind === "diff" ? await loadDiffView(deps.db, view.job.id) : undefined,
      refusal,
      // The host's repository as it is now, not as it was when this job ran.
      outage: await loadOutage(deps.db, view.host.id),
      // A protected host's upkeep runs on its keeper (keepers/).
      runner: view.job.runnerHostId === null ? undefined : await hostRef(deps.db, view.job.runnerHostId),
    });
  });
  // The stream itself is a WebSocket (job-stream.ts); a plain GET reaching here passed the role
  // check, and the upgrade handler reads this 426 as "authorised".
  routes.get("/jobs/:id/stream", viewer, async (c) => {
    const job = await getJob(deps.db, c.req.param("id"));
    c.header("Upgrade", "websocket");
    return c.json(
      errorBody("upgrade_required", `/jobs/${job.id}/stream is a WebSocket: connect with Upgrade: websocket`),
      STREAM_AUTHORISED_STATUS,
    );
  });
  routes.post("/jobs/:id/cancel", operator, async (c) => {
    const outcome = await cancelJob(deps, auditOf(c), c.req.param("id"));
    return redirectAfterPost(c, `/jobs/${outcome.job.id}`);
  });

  routes.get("/hosts/:id/jobs", viewer, async (c) => {
    const query = readQuery(c, HostJobsQuery);
    const host = await findHost(deps.db, c.req.param("id"));
    const status = query.status || undefined;
    const kind = query.kind || undefined;
    const found = await listJobs(deps.db, {
      hostId: host.id,
      status,
      kind,
      before: query.before,
      limit: HOST_JOBS_PAGE,
    });
    const next = nextBefore(found, HOST_JOBS_PAGE);
    const params = new URLSearchParams();
    if (status) {
      params.set("status", status);
    }
    if (kind) {
      params.set("kind", kind);
    }
    if (next) {
      params.set("before", next);
    }
    return renderPage(c, deps.views, "pages/host-jobs.njk", {
      title: `${host.name}: jobs`,
      host,
      jobs: found,
      statuses: JOB_STATUSES,
      kinds: JOB_KINDS,
      filter: { status: status ?? "", kind: kind ?? "" },
      olderHref: next ? `/hosts/${host.id}/jobs?${params.toString()}` : undefined,
      firstPage: query.before === undefined,
    });
  });
  return routes;
}
