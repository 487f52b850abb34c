/**
 * @module routes/jobs
 * The job list with filters, one job, its stored log lines (paged by sequence number), and the
 * operator's cancel.
 */
import { JOB_KINDS, JOB_STATUSES } from "@fleetback/db";
import { Hono } from "hono";
import { Type } from "typebox";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, auditOf, requireRole } from "../auth/actor.js";
import { readQuery } from "../http/validate.js";
import { cancelJob } from "../jobs/cancel-job.js";
import { getJob, jobJson, listJobLogs, listJobs } from "../jobs/job-queries.js";

const Ulid = Type.String({ pattern: "^[0-9A-HJKMNP-TV-Z]{26}$" });
export const JobsQuery = Type.Object(
  {
    host_id: Type.Optional(Ulid),
    status: Type.Optional(Type.Union(JOB_STATUSES.map((s) => Type.Literal(s)))),
    kind: Type.Optional(Type.Union(JOB_KINDS.map((k) => Type.Literal(k)))),
    before: Type.Optional(Ulid),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 999 })),
  },
  { additionalProperties: false },
);
export const LogsQuery = Type.Object(
  {
    after_seq: Type.Optional(Type.Integer({ minimum: 0, maximum: 999_999_999 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 9999 })),
  },
  { additionalProperties: false },
);

export function jobRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const viewer = requireRole("viewer");
  const operator = requireRole("operator");
  routes.get("/api/jobs", viewer, async (c) => {
    const query = readQuery(c, JobsQuery);
    const limit = Math.min(Number(query.limit ?? 50), 200);
    const found = await listJobs(deps.db, {
      hostId: query.host_id,
      status: query.status,
      kind: query.kind,
      before: query.before,
      limit,
    });
    return c.json({
      jobs: found.map(jobJson),
      next_before: found.length === limit ? found.at(-1)?.id : undefined,
    });
  });
  routes.get("/api/jobs/:id", viewer, async (c) => {
    return c.json({ job: jobJson(await getJob(deps.db, c.req.param("id"))) });
  });
  routes.get("/api/jobs/:id/logs", viewer, async (c) => {
    const query = readQuery(c, LogsQuery);
    const job = await getJob(deps.db, c.req.param("id"));
    const limit = Math.min(Number(query.limit ?? 1000), 5000);
    const lines = await listJobLogs(deps.db, job.id, { afterSeq: Number(query.after_seq ?? 0), limit });
    return c.json({ lines, next_after_seq: lines.length === limit ? lines.at(-1)?.seq : undefined });
  });
  routes.post("/api/jobs/:id/cancel", operator, async (c) => {
    const outcome = await cancelJob(deps, auditOf(c), c.req.param("id"));
    // 202: the agent was asked and the status follows its job.finished; 200: cancelled here.
    return c.json(
      { job_id: outcome.job.id, status: outcome.job.status, cancel_sent: outcome.kind === "requested" },
      outcome.kind === "requested" ? 202 : 200,
    );
  });
  return routes;
}
