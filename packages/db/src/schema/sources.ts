/**
 * @module The three backup nouns of a host: source groups (what), schedules (when) and
 * repository maintenance (forget, prune and check cadences).
 */
import { sql } from "drizzle-orm";
import {
  boolean,
  check,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  unique,
} from "drizzle-orm/pg-core";
import { bytea, createdAt, timestamptz, updatedAt } from "./columns.js";
import { policies } from "./policies.js";
import { hostIdColumn, hostIdKey } from "./references.js";

/**
 * Keep-style retention values; key names mirror the wire's `keep` (KEEP_KEYS in @fleetback/protocol).
 * No key set = empty policy.
 */
export interface RetentionPolicy {
  last?: number;
  hourly?: number;
  daily?: number;
  weekly?: number;
  monthly?: number;
  yearly?: number;
  within?: string;
  within_hourly?: string;
  within_daily?: string;
  within_weekly?: string;
  within_monthly?: string;
  within_yearly?: string;
}

export const sourceGroups = pgTable(
  "source_groups",
  {
    id: text("id").primaryKey(),
    hostId: hostIdColumn(),
    // Doubles as the snapshot tag, hence unique per host.
    name: text("name").notNull(),
    includes: jsonb("includes").$type<string[]>().notNull().default([]),
    excludes: jsonb("excludes").$type<string[]>().notNull().default([]),
    retentionPolicy: jsonb("retention_policy").$type<RetentionPolicy>().notNull().default({}),
    retryMax: integer("retry_max").notNull().default(3),
    retryBackoffSeconds: integer("retry_backoff_seconds").notNull().default(300),
    // Derived and cached: recomputed on every group write of the host.
    conflictDimension: text("conflict_dimension"),
    // Seconds after a run was due without a new snapshot before the group is overdue; null: 1 h.
    graceSeconds: integer("grace_seconds"),
    // KiB/s for this group's backups; the stricter of these and the host's caps applies.
    bandwidthUpKbps: integer("bandwidth_up_kbps"),
    bandwidthDownKbps: integer("bandwidth_down_kbps"),
    preHook: bytea("pre_hook"),
    postHook: bytea("post_hook"),
    // Set: the group is a policy's (policies.ts), written as that version gave it; null: the host's own.
    policyId: text("policy_id").references(() => policies.id, { onDelete: "set null" }),
    policyVersion: integer("policy_version"),
    // A policy group's fields the host set itself (API field names): kept over every next version.
    overrides: jsonb("overrides").$type<Record<string, unknown>>().notNull().default({}),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    unique("source_groups_host_id_name_key").on(t.hostId, t.name),
    check("source_groups_overrides_object_check", sql`jsonb_typeof(${t.overrides}) = 'object'`),
    index("source_groups_policy_id_idx").on(t.policyId).where(sql`${t.policyId} is not null`),
    check("source_groups_retry_max_check", sql`${t.retryMax} >= 0`),
    check("source_groups_retry_backoff_seconds_check", sql`${t.retryBackoffSeconds} >= 0`),
    check("source_groups_grace_seconds_check", sql`${t.graceSeconds} > 0`),
    check("source_groups_bandwidth_up_kbps_check", sql`${t.bandwidthUpKbps} > 0`),
    check("source_groups_bandwidth_down_kbps_check", sql`${t.bandwidthDownKbps} > 0`),
  ],
);

export const schedules = pgTable(
  "schedules",
  {
    id: text("id").primaryKey(),
    hostId: hostIdColumn(),
    cron: text("cron").notNull(),
    enabled: boolean("enabled").notNull().default(true),
    // The scheduled_at of the last fire acted on: a repeated or older fire dispatches nothing.
    lastFiredAt: timestamptz("last_fired_at"),
    // Set: a policy's schedule (its name within the policy), as that version gave it.
    policyId: text("policy_id").references(() => policies.id, { onDelete: "set null" }),
    policyVersion: integer("policy_version"),
    policySchedule: text("policy_schedule"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index("schedules_host_id_idx").on(t.hostId),
    index("schedules_policy_id_idx").on(t.policyId).where(sql`${t.policyId} is not null`),
  ],
);

/**
 * Schedule membership. The database itself refuses to delete a group a schedule still fires
 * (the API answers 409 before reaching it). The SQL declares that reference
 * `DEFERRABLE INITIALLY DEFERRED` (drizzle cannot express it): deleting a host cascades to its
 * groups and to its schedules' membership rows in an order PostgreSQL does not promise, so the
 * check must wait for the commit, when the membership rows are gone too. A direct group delete
 * still fails, at its commit.
 */
export const scheduleSourceGroups = pgTable(
  "schedule_source_groups",
  {
    scheduleId: text("schedule_id")
      .notNull()
      .references(() => schedules.id, { onDelete: "cascade" }),
    sourceGroupId: text("source_group_id")
      .notNull()
      .references(() => sourceGroups.id, { onDelete: "no action" }),
  },
  (t) => [
    primaryKey({ name: "schedule_source_groups_pkey", columns: [t.scheduleId, t.sourceGroupId] }),
    index("schedule_source_groups_source_group_id_idx").on(t.sourceGroupId),
  ],
);

export const maintenance = pgTable(
  "maintenance",
  {
    hostId: hostIdKey(),
    forgetCron: text("forget_cron").notNull().default("0 3 * * *"),
    forgetEnabled: boolean("forget_enabled").notNull().default(true),
    pruneCron: text("prune_cron").notNull().default("0 4 * * 0"),
    pruneEnabled: boolean("prune_enabled").notNull().default(true),
    checkCron: text("check_cron").notNull().default("0 5 1 * *"),
    checkEnabled: boolean("check_enabled").notNull().default(true),
    checkReadDataSubset: text("check_read_data_subset").notNull().default("5%"),
    // Restore drills are off by default: each one downloads data from the repository.
    drillCron: text("drill_cron").notNull().default("0 6 * * 3"),
    drillEnabled: boolean("drill_enabled").notNull().default(false),
    drillSampleFiles: integer("drill_sample_files").notNull().default(20),
    // Fields a policy set (API name to "policy id:version"), and fields the host set over a policy's.
    policyFields: jsonb("policy_fields").$type<Record<string, string>>().notNull().default({}),
    overrides: jsonb("overrides").$type<Record<string, unknown>>().notNull().default({}),
    // The due slot last dispatched per kind, so a restart never dispatches the same slot twice.
    lastForgetSlotAt: timestamptz("last_forget_slot_at"),
    lastPruneSlotAt: timestamptz("last_prune_slot_at"),
    lastCheckSlotAt: timestamptz("last_check_slot_at"),
    lastDrillSlotAt: timestamptz("last_drill_slot_at"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [check("maintenance_drill_sample_files_check", sql`${t.drillSampleFiles} between 1 and 100`)],
);

export type SourceGroup = typeof sourceGroups.$inferSelect;
export type NewSourceGroup = typeof sourceGroups.$inferInsert;
export type Schedule = typeof schedules.$inferSelect;
export type NewSchedule = typeof schedules.$inferInsert;
export type ScheduleSourceGroup = typeof scheduleSourceGroups.$inferSelect;
export type NewScheduleSourceGroup = typeof scheduleSourceGroups.$inferInsert;
export type Maintenance = typeof maintenance.$inferSelect;
export type NewMaintenance = typeof maintenance.$inferInsert;
