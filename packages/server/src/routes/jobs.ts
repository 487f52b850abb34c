/**
 * @module routes/jobs
 * The job list with filters, one job, its stored log lines (paged by sequence number), and the
 * operator's cancel.
 */

import { JOB_KINDS, JOB_STATUSES } from "@fleetback/db";
import type { Hono } from "hono";
import { Type } from "typebox";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, auditOf } from "../auth/actor.js";
import { nextBefore } from "../http/next-before.js";
import { cancelJob } from "../jobs/cancel-job.js";
import { getJob, jobJson, listJobLogs, listJobs } from "../jobs/job-queries.js";
import { apiGroup } from "../openapi/api-route.js";
import { CancelAnswer, JobAnswer, JobLogPage, JobPage } from "../openapi/job-schemas.js";

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

const JOB_ID = { id: "The job's id." };

export const JOB_API = apiGroup<AppDeps>({ tag: "Jobs" });

JOB_API.add({
  id: "listJobs",
  method: "get",
  path: "/api/jobs",
  summary: "List jobs, newest first",
  access: "viewer",
  query: JobsQuery,
  responses: { 200: { description: "A page of jobs.", schema: JobPage } },
  handler: async (c, { query }, deps) => {
    const limit = Math.min(Number(query.limit ?? 50), 200);
    const found = await listJobs(deps.db, {
      hostId: query.host_id,
      status: query.status,
      kind: query.kind,
      before: query.before,
      limit,
    });
    return c.json({ jobs: found.map(jobJson), next_before: nextBefore(found, limit) });
  },
});

JOB_API.add({
  id: "getJob",
  method: "get",
  path: "/api/jobs/:id",
  summary: "One job",
  access: "viewer",
  params: JOB_ID,
  responses: { 200: { description: "The job.", schema: JobAnswer } },
  handler: async (c, _input, deps) => {
    return c.json({ job: jobJson(await getJob(deps.db, c.req.param("id"))) });
  },
});

JOB_API.add({
  id: "listJobLogs",
  method: "get",
  path: "/api/jobs/:id/logs",
  summary: "A job's stored log lines, in order",
  access: "viewer",
  params: JOB_ID,
  query: LogsQuery,
  responses: { 200: { description: "A page of lines.", schema: JobLogPage } },
  handler: async (c, { query }, deps) => {
    const job = await getJob(deps.db, c.req.param("id"));
    const limit = Math.min(Number(query.limit ?? 1000), 5000);
    const lines = await listJobLogs(deps.db, job.id, { afterSeq: Number(query.after_seq ?? 0), limit });
    return c.json({ lines, next_after_seq: lines.length === limit ? lines.at(-1)?.seq : undefined });
  },
});

JOB_API.add({
  id: "cancelJob",
  method: "post",
  path: "/api/jobs/:id/cancel",
  summary: "Cancel a queued or running job",
  access: "operator",
  params: JOB_ID,
  responses: {
    200: { description: "Cancelled here: the job never reached an agent.", schema: CancelAnswer },
    202: {
      description: "The agent was asked to stop; the status follows its answer.",
      schema: CancelAnswer,
    },
  },
  errors: { 409: "The job has already finished." },
  handler: async (c, _input, deps) => {
    const outcome = await cancelJob(deps, auditOf(c), c.req.param("id"));
    // 202: the agent was asked and the status follows its job.finished; 200: cancelled here.
    return c.json(
      { job_id: outcome.job.id, status: outcome.job.status, cancel_sent: outcome.kind === "requested" },
      outcome.kind === "requested" ? 202 : 200,
    );
  },
});

export function jobRoutes(deps: AppDeps): Hono<AppEnv> {
  return JOB_API.routes(deps);
}
