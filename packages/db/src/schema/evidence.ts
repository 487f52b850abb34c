/**
 * @module Evidence for an audit (issue 39.2): per host and UTC day, the snapshots of each group the
 * server first saw, and the checks and drills that ended. No foreign key to hosts: a deleted host's
 * history stays, and nothing later (a forget, a new list) rewrites a recorded day.
 */
import { sql } from "drizzle-orm";
import { boolean, check, date, index, integer, jsonb, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { timestamptz } from "./columns.js";

export const EVIDENCE_KINDS = ["snapshot", "check", "drill"] as const;
export type EvidenceKind = (typeof EVIDENCE_KINDS)[number];

export const evidenceHosts = pgTable("evidence_hosts", {
  hostId: text("host_id").primaryKey(),
  name: text("name").notNull(),
  labels: jsonb("labels").$type<Record<string, string>>().notNull().default({}),
  firstDay: date("first_day", { mode: "string" }).notNull(),
  updatedAt: timestamptz("updated_at").notNull(),
});

export const evidenceDays = pgTable(
  "evidence_days",
  {
    hostId: text("host_id").notNull(),
    // "YYYY-MM-DD" in UTC, like repository_sizes.
    day: date("day", { mode: "string" }).notNull(),
    kind: text("kind").$type<EvidenceKind>().notNull(),
    subject: text("subject").notNull().default(""),
    runs: integer("runs").notNull(),
    passed: integer("passed").notNull(),
    lastAt: timestamptz("last_at").notNull(),
    lastPassed: boolean("last_passed").notNull(),
  },
  (t) => [
    primaryKey({ name: "evidence_days_pkey", columns: [t.hostId, t.day, t.kind, t.subject] }),
    index("evidence_days_day_idx").on(t.day),
    check("evidence_days_kind_check", sql`${t.kind} IN ('snapshot', 'check', 'drill')`),
    check("evidence_days_counts_check", sql`${t.runs} > 0 AND ${t.passed} >= 0 AND ${t.passed} <= ${t.runs}`),
  ],
);

export type EvidenceDay = typeof evidenceDays.$inferSelect;
