/**
 * @module Deletion holds (issue 33): while a host has an open one, no forget or prune of its
 * repository is dispatched. An admin releases it with a reason.
 */
import { sql } from "drizzle-orm";
import { check, jsonb, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { createdAt, timestamptz } from "./columns.js";
import { hostIdColumn, userRef } from "./references.js";

export const DELETION_HOLD_KINDS = ["backup_anomaly", "large_forget"] as const;
export type DeletionHoldKind = (typeof DELETION_HOLD_KINDS)[number];

export const deletionHolds = pgTable(
  "deletion_holds",
  {
    id: text("id").primaryKey(),
    hostId: hostIdColumn(),
    kind: text("kind").$type<DeletionHoldKind>().notNull(),
    // What opened it, as a sentence with its numbers.
    reason: text("reason").notNull(),
    // backup_anomaly: the backup's job id and figures; large_forget: the held plan and its ids.
    details: jsonb("details").$type<Record<string, unknown>>().notNull().default({}),
    createdAt: createdAt(),
    releasedAt: timestamptz("released_at"),
    releasedBy: userRef("released_by"),
    releaseReason: text("release_reason"),
  },
  (t) => [
    check("deletion_holds_kind_check", sql`${t.kind} in ('backup_anomaly', 'large_forget')`),
    check("deletion_holds_release_check", sql`(${t.releasedAt} is null) = (${t.releaseReason} is null)`),
    uniqueIndex("deletion_holds_open_key").on(t.hostId, t.kind).where(sql`${t.releasedAt} is null`),
  ],
);

export type DeletionHold = typeof deletionHolds.$inferSelect;
export type NewDeletionHold = typeof deletionHolds.$inferInsert;
