/**
 * @module The audit trail of operator and system actions (e.g. `host.restore`).
 */
import { sql } from "drizzle-orm";
import { check, index, jsonb, pgTable, text } from "drizzle-orm/pg-core";
import { timestamptz } from "./columns.js";
import { userRef } from "./references.js";

export const AUDIT_ACTOR_KINDS = ["user", "system", "agent"] as const;
export type AuditActorKind = (typeof AUDIT_ACTOR_KINDS)[number];

export const auditLog = pgTable(
  "audit_log",
  {
    id: text("id").primaryKey(),
    at: timestamptz("at").notNull().defaultNow(),
    actorKind: text("actor_kind").$type<AuditActorKind>().notNull(),
    // Null once the user is deleted; the entry itself stays.
    actorUserId: userRef("actor_user_id"),
    action: text("action").notNull(),
    targetKind: text("target_kind"),
    targetId: text("target_id"),
    // Never secrets: callers pass redacted values only.
    details: jsonb("details").$type<Record<string, unknown>>().notNull().default({}),
    ip: text("ip"),
  },
  (t) => [
    check("audit_log_actor_kind_check", sql`${t.actorKind} in ('user', 'system', 'agent')`),
    index("audit_log_at_idx").on(t.at.desc()),
    index("audit_log_target_idx").on(t.targetKind, t.targetId),
  ],
);

export type AuditEntry = typeof auditLog.$inferSelect;
export type NewAuditEntry = typeof auditLog.$inferInsert;
