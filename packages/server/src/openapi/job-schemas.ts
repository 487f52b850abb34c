/**
 * @module openapi/job-schemas
 * Answers about jobs: one job (jobs/job-queries.ts jobJson), a page of them, its log lines, a
 * cancel, and the `{job_id}` a route answers when it started one.
 */
import { ACTOR_KINDS, LOG_STREAMS } from "@fleetback/db";
import { Type } from "typebox";
import {
  DateTime,
  Enum,
  Id,
  JsonObject,
  Nullable,
  NullableDateTime,
  NullableString,
} from "./common-schemas.js";
import { JobKind, JobStatus } from "./host-schemas.js";

export const Job = Type.Object(
  {
    id: Id,
    host_id: Id,
    runner_host_id: Type.Union([Id, Type.Null()], {
      description: "the keeper whose agent runs this protected host's job; null: the host itself",
    }),
    kind: JobKind,
    status: JobStatus,
    actor_kind: Enum(ACTOR_KINDS),
    actor_user_id: NullableString,
    scheduled_id: NullableString,
    source_group_id: NullableString,
    params: Type.Record(Type.String(), Type.Unknown(), {
      description: "what the job was asked to do, by kind (never a secret)",
    }),
    progress: Nullable(JsonObject),
    summary: Nullable(JsonObject),
    exit_code: Nullable(Type.Integer()),
    error: NullableString,
    created_at: DateTime,
    started_at: NullableDateTime,
    finished_at: NullableDateTime,
    log_end_seq: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
      description:
        "the seq of the last log line the agent sent before the job's result; lines after it are what the agent logged after the job ended (a backup's snapshot list and repository statistics). null: not known (a job the server ended, or one that ended before this field)",
    }),
  },
  { $id: "Job" },
);

const nextBefore = Type.Optional(
  Type.String({ description: "present when the page is full: pass it as `before` for the next page" }),
);

export const JobPage = Type.Object({ jobs: Type.Array(Job), next_before: nextBefore });

export const JobAnswer = Type.Object({ job: Job });

export const JobLogPage = Type.Object({
  lines: Type.Array(
    Type.Object({
      seq: Type.Integer(),
      stream: Enum(LOG_STREAMS),
      line: Type.String(),
      ts: DateTime,
    }),
  ),
  next_after_seq: Type.Optional(
    Type.Integer({ description: "present when the page is full: pass it as `after_seq` for the next page" }),
  ),
});

export const CancelAnswer = Type.Object({
  job_id: Id,
  status: JobStatus,
  cancel_sent: Type.Boolean({ description: "the agent was asked to stop; the status follows its answer" }),
});

/** `{job_id}` of a route that started a job. */
export const JobStarted = Type.Object({ job_id: Id }, { $id: "JobStarted" });

/** `{job_id, status}` of a route that started (or queued) a job. */
export const JobStartedWithStatus = Type.Object(
  { job_id: Id, status: JobStatus },
  { $id: "JobStartedWithStatus" },
);

export { nextBefore as NextBefore };
