/**
 * @module Fleet policies (issue 37): a label selector and the source groups and schedules of the
 * hosts it covers, versioned. What a policy gives a host lives in the host's own source_groups and
 * schedules rows, marked with `policy_id` and `policy_version` (sources.ts).
 */

import { sql } from "drizzle-orm";
import { check, integer, jsonb, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { createdAt, updatedAt } from "./columns.js";
import { userRef } from "./references.js";

/** A policy's content as stored; its shape is checked by the server (policies/policy-spec.ts). */
export type PolicySpecJson = Record<string, unknown>;

export const policies = pgTable(
  "policies",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull().unique("policies_name_key"),
    version: integer("version").notNull(),
    selector: text("selector").notNull(),
    priority: integer("priority").notNull(),
    spec: jsonb("spec").$type<PolicySpecJson>().notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    check("policies_version_check", sql`${t.version} >= 1`),
    check("policies_priority_check", sql`${t.priority} BETWEEN 0 AND 1000`),
    check("policies_spec_object_check", sql`jsonb_typeof(${t.spec}) = 'object'`),
  ],
);

/** Every version ever applied, immutable: a rollback applies an old one as the next version. */
export const policyVersions = pgTable(
  "policy_versions",
  {
    policyId: text("policy_id")
      .notNull()
      .references(() => policies.id, { onDelete: "cascade" }),
    version: integer("version").notNull(),
    name: text("name").notNull(),
    selector: text("selector").notNull(),
    priority: integer("priority").notNull(),
    spec: jsonb("spec").$type<PolicySpecJson>().notNull(),
    actorUserId: userRef("actor_user_id"),
    note: text("note"),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ name: "policy_versions_pkey", columns: [t.policyId, t.version] })],
);

export type Policy = typeof policies.$inferSelect;
export type PolicyVersion = typeof policyVersions.$inferSelect;
