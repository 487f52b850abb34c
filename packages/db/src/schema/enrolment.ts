/**
 * @module Both enrolment routes: operator-minted one-time tokens and agent-initiated announces.
 */
import { sql } from "drizzle-orm";
import { check, index, jsonb, pgTable, text } from "drizzle-orm/pg-core";
import { bytea, createdAt, timestamptz } from "./columns.js";
import { hosts } from "./hosts.js";
import { userRef } from "./references.js";

export const enrolmentTokens = pgTable(
  "enrolment_tokens",
  {
    id: text("id").primaryKey(),
    tokenHash: text("token_hash").notNull().unique("enrolment_tokens_token_hash_key"),
    // Sealed with the token hash as additional data; re-sealed to the host on enrolment.
    sealedRepository: bytea("sealed_repository"),
    initialPaths: jsonb("initial_paths").$type<string[]>().notNull().default([]),
    // The schedule and retention the initial paths' group gets; null: none (an explicit choice).
    initialSchedule: jsonb("initial_schedule").$type<{
      cron: string;
      retention: Record<string, number | string>;
    } | null>(),
    // The labels every host enrolled with the token gets (issue 37).
    labels: jsonb("labels").$type<Record<string, string>>().notNull().default({}),
    createdBy: userRef("created_by"),
    createdAt: createdAt(),
    expiresAt: timestamptz("expires_at").notNull(),
    consumedAt: timestamptz("consumed_at"),
    // Audit only: the host outlives nothing here, so its deletion just clears the link.
    consumedByHostId: text("consumed_by_host_id").references(() => hosts.id, { onDelete: "set null" }),
    // Issue 38.2: the host the machine enrolling with this token replaces (its row is taken over).
    successorOf: text("successor_of").references(() => hosts.id, { onDelete: "cascade" }),
  },
  (t) => [check("enrolment_tokens_labels_object_check", sql`jsonb_typeof(${t.labels}) = 'object'`)],
);

export const pendingHosts = pgTable(
  "pending_hosts",
  {
    id: text("id").primaryKey(),
    hostname: text("hostname").notNull(),
    os: text("os").notNull(),
    arch: text("arch").notNull(),
    agentVersion: text("agent_version").notNull(),
    toolVersion: text("tool_version").notNull().default(""),
    // Raw Ed25519 public key.
    publicKey: bytea("public_key").notNull(),
    fingerprint: text("fingerprint").notNull(),
    sourceIp: text("source_ip"),
    createdAt: createdAt(),
    expiresAt: timestamptz("expires_at").notNull(),
    approvedAt: timestamptz("approved_at"),
    approvedBy: userRef("approved_by"),
    hostId: text("host_id").references(() => hosts.id, { onDelete: "set null" }),
    // Handed out once at claim, then set to null.
    sealedAgentToken: bytea("sealed_agent_token"),
    claimedAt: timestamptz("claimed_at"),
    // What the install asked for (install.sh --label); the host gets them when approved.
    labels: jsonb("labels").$type<Record<string, string>>().notNull().default({}),
  },
  (t) => [
    check("pending_hosts_public_key_check", sql`octet_length(${t.publicKey}) = 32`),
    // The expiry sweeper deletes by this column.
    index("pending_hosts_expires_at_idx").on(t.expiresAt),
    check("pending_hosts_labels_object_check", sql`jsonb_typeof(${t.labels}) = 'object'`),
  ],
);

export type EnrolmentToken = typeof enrolmentTokens.$inferSelect;
export type NewEnrolmentToken = typeof enrolmentTokens.$inferInsert;
export type PendingHost = typeof pendingHosts.$inferSelect;
export type NewPendingHost = typeof pendingHosts.$inferInsert;
