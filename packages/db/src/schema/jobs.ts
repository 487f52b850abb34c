/**
 * @module Jobs dispatched to agents and the log lines they stream back.
 */
import { sql } from "drizzle-orm";
import { bigint, check, index, integer, jsonb, pgTable, text } from "drizzle-orm/pg-core";
import { users } from "./auth.js";
import { createdAt, timestamptz } from "./columns.js";
import { hosts } from "./hosts.js";
import { schedules, sourceGroups } from "./sources.js";

export const JOB_KINDS = [
  "backup",
  "forget",
  "prune",
  "check",
  "unlock",
  "init",
  "restore",
  "diff",
  "drill",
  "copy",
] as const;
export type JobKind = (typeof JOB_KINDS)[number];

export const JOB_STATUSES = ["queued", "running", "succeeded", "failed", "cancelled", "lost"] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
/** Statuses of a job that has not finished yet. */
export const ACTIVE_JOB_STATUSES = ["queued", "running"] as const satisfies readonly JobStatus[];

export const ACTOR_KINDS = ["user", "schedule", "system"] as const;
export type ActorKind = (typeof ACTOR_KINDS)[number];

export const LOG_STREAMS = ["stdout", "stderr", "agent"] as const;
export type LogStream = (typeof LOG_STREAMS)[number];

export const jobs = pgTable(
  "jobs",
  {
    // ULID, so ids sort by creation time.
    id: text("id").primaryKey(),
    hostId: text("host_id")
      .notNull()
      .references(() => hosts.id, { onDelete: "cascade" }),
    kind: text("kind").$type<JobKind>().notNull(),
    status: text("status").$type<JobStatus>().notNull().default("queued"),
    actorKind: text("actor_kind").$type<ActorKind>().notNull(),
    actorUserId: text("actor_user_id").references(() => users.id, { onDelete: "set null" }),
    // Set at insert for actor_kind 'schedule'; not a constraint because deleting the schedule
    // clears it later while the job stays in history.
    scheduledId: text("scheduled_id").references(() => schedules.id, { onDelete: "set null" }),
    sourceGroupId: text("source_group_id").references(() => sourceGroups.id, { onDelete: "set null" }),
    // Non-secret dispatch parameters; secrets travel only in the command itself.
    // The host whose agent runs the job when it is not `host_id`: a keeper's kept job (issue 33).
    runnerHostId: text("runner_host_id").references(() => hosts.id, { onDelete: "set null" }),
    params: jsonb("params").$type<Record<string, unknown>>().notNull().default({}),
    progress: jsonb("progress").$type<Record<string, unknown>>(),
    summary: jsonb("summary").$type<Record<string, unknown>>(),
    exitCode: integer("exit_code"),
    error: text("error"),
    createdAt: createdAt(),
    startedAt: timestamptz("started_at"),
    finishedAt: timestamptz("finished_at"),
  },
  (t) => [
    check(
      "jobs_kind_check",
      sql`${t.kind} in ('backup', 'forget', 'prune', 'check', 'unlock', 'init', 'restore', 'diff', 'drill', 'copy')`,
    ),
    check(
      "jobs_status_check",
      sql`${t.status} in ('queued', 'running', 'succeeded', 'failed', 'cancelled', 'lost')`,
    ),
    check("jobs_actor_kind_check", sql`${t.actorKind} in ('user', 'schedule', 'system')`),
    index("jobs_host_id_created_at_idx").on(t.hostId, t.createdAt.desc()),
    index("jobs_active_status_idx").on(t.status).where(sql`${t.status} in ('queued', 'running')`),
    // Auto-init looks for the host's init jobs; stats look for the latest job per kind.
    index("jobs_host_id_kind_idx").on(t.hostId, t.kind),
    // Deleting a group or schedule sets these to null; without an index that is a full scan.
    index("jobs_source_group_id_idx").on(t.sourceGroupId),
    index("jobs_scheduled_id_idx").on(t.scheduledId),
    index("jobs_runner_host_id_idx").on(t.runnerHostId).where(sql`${t.runnerHostId} is not null`),
  ],
);

export const jobLogs = pgTable(
  "job_logs",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
    jobId: text("job_id")
      .notNull()
      .references(() => jobs.id, { onDelete: "cascade" }),
    seq: integer("seq").notNull(),
    stream: text("stream").$type<LogStream>().notNull(),
    line: text("line").notNull(),
    ts: timestamptz("ts").notNull(),
  },
  (t) => [
    check("job_logs_stream_check", sql`${t.stream} in ('stdout', 'stderr', 'agent')`),
    index("job_logs_job_id_seq_idx").on(t.jobId, t.seq),
  ],
);

export type Job = typeof jobs.$inferSelect;
export type NewJob = typeof jobs.$inferInsert;
export type JobLog = typeof jobLogs.$inferSelect;
export type NewJobLog = typeof jobLogs.$inferInsert;
