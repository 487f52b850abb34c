/**
 * @module Jobs dispatched to agents and the log lines they stream back.
 */
import {
  ACTIVE_JOB_STATUSES,
  ACTOR_KINDS,
  type ActorKind,
  JOB_KINDS,
  JOB_STATUSES,
  type JobStatus,
  LOG_STREAMS,
} from "@fleetback/protocol";
import { sql } from "drizzle-orm";
import { bigint, check, index, integer, jsonb, pgTable, text } from "drizzle-orm/pg-core";
import { createdAt, timestamptz } from "./columns.js";
import { hosts } from "./hosts.js";
import { hostIdColumn, userRef } from "./references.js";
import { schedules, sourceGroups } from "./sources.js";

// The vocabulary is the wire contract's: a kind, status or stream the protocol adds is one the
// database must take. The migrations' CHECKs spell the same lists (vocabulary.test.ts ties them).
export {
  ACTIVE_JOB_STATUSES,
  ACTOR_KINDS,
  type ActorKind,
  JOB_KINDS,
  JOB_STATUSES,
  type JobStatus,
  LOG_STREAMS,
};
export type JobKind = (typeof JOB_KINDS)[number];
export type LogStream = (typeof LOG_STREAMS)[number];

/** `'a', 'b'`: a list of words as the SQL of a CHECK's `in (…)`. */
function sqlList(words: readonly string[]) {
  return sql.raw(words.map((word) => `'${word.replaceAll("'", "''")}'`).join(", "));
}

export const jobs = pgTable(
  "jobs",
  {
    // ULID, so ids sort by creation time.
    id: text("id").primaryKey(),
    hostId: hostIdColumn(),
    kind: text("kind").$type<JobKind>().notNull(),
    status: text("status").$type<JobStatus>().notNull().default("queued"),
    actorKind: text("actor_kind").$type<ActorKind>().notNull(),
    actorUserId: userRef("actor_user_id"),
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
    // The seq of the last log line received before the job's result; later ones came after it ended.
    logEndSeq: integer("log_end_seq"),
  },
  (t) => [
    check("jobs_kind_check", sql`${t.kind} in (${sqlList(JOB_KINDS)})`),
    check("jobs_status_check", sql`${t.status} in (${sqlList(JOB_STATUSES)})`),
    check("jobs_actor_kind_check", sql`${t.actorKind} in (${sqlList(ACTOR_KINDS)})`),
    index("jobs_host_id_created_at_idx").on(t.hostId, t.createdAt.desc()),
    index("jobs_active_status_idx")
      .on(t.status)
      .where(sql`${t.status} in (${sqlList(ACTIVE_JOB_STATUSES)})`),
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
    check("job_logs_stream_check", sql`${t.stream} in (${sqlList(LOG_STREAMS)})`),
    index("job_logs_job_id_seq_idx").on(t.jobId, t.seq),
  ],
);

export type Job = typeof jobs.$inferSelect;
export type NewJob = typeof jobs.$inferInsert;
export type JobLog = typeof jobLogs.$inferSelect;
export type NewJobLog = typeof jobLogs.$inferInsert;
