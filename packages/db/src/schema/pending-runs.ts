/**
 * @module The offline-retry queue: backups that could not be sent or failed transiently, due
 * again at `next_attempt_at`.
 */
import { sql } from "drizzle-orm";
import { check, index, integer, pgTable, text } from "drizzle-orm/pg-core";
import { createdAt, timestamptz, updatedAt } from "./columns.js";
import { type ActorKind, jobs } from "./jobs.js";
import { hostIdColumn, userRef } from "./references.js";
import { schedules, sourceGroups } from "./sources.js";

export const pendingRuns = pgTable(
  "pending_runs",
  {
    id: text("id").primaryKey(),
    hostId: hostIdColumn(),
    // A retry of a deleted group has nothing left to back up.
    sourceGroupId: text("source_group_id")
      .notNull()
      .references(() => sourceGroups.id, { onDelete: "cascade" }),
    scheduleId: text("schedule_id").references(() => schedules.id, { onDelete: "set null" }),
    actorKind: text("actor_kind").$type<ActorKind>().notNull(),
    actorUserId: userRef("actor_user_id"),
    // Attempts made so far; bounded by the group's retry_max.
    attempt: integer("attempt").notNull().default(0),
    nextAttemptAt: timestamptz("next_attempt_at").notNull(),
    lastJobId: text("last_job_id").references(() => jobs.id, { onDelete: "set null" }),
    reason: text("reason"),
    // An operator's caps for this one run (run-now), KiB/s; null = the group's own.
    bandwidthUpKbps: integer("bandwidth_up_kbps"),
    bandwidthDownKbps: integer("bandwidth_down_kbps"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    check("pending_runs_actor_kind_check", sql`${t.actorKind} in ('user', 'schedule', 'system')`),
    check("pending_runs_attempt_check", sql`${t.attempt} >= 0`),
    check("pending_runs_bandwidth_up_kbps_check", sql`${t.bandwidthUpKbps} > 0`),
    check("pending_runs_bandwidth_down_kbps_check", sql`${t.bandwidthDownKbps} > 0`),
    // The retry ticker scans for due rows.
    index("pending_runs_next_attempt_at_idx").on(t.nextAttemptAt),
    index("pending_runs_host_id_idx").on(t.hostId),
  ],
);

export type PendingRun = typeof pendingRuns.$inferSelect;
export type NewPendingRun = typeof pendingRuns.$inferInsert;
