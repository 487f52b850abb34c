/**
 * @module Agent rollouts in rings (issue 37.5): the version, the rings (a selector, a share of
 * the hosts left, the failures a ring may have), the ring under way and the hosts each ring took.
 */
import { sql } from "drizzle-orm";
import { check, index, integer, jsonb, pgTable, text } from "drizzle-orm/pg-core";
import { createdAt, updatedAt } from "./columns.js";
import { userRef } from "./references.js";

export const ROLLOUT_STATES = ["running", "halted", "completed"] as const;
export type RolloutState = (typeof ROLLOUT_STATES)[number];

export interface RolloutRing {
  selector: string;
  /** Of the hosts the selector matches and no earlier ring took, this share (1–100); absent: all. */
  percent?: number;
  /** Failed updates the ring may have before the rollout halts. */
  max_failed: number;
}

export const agentRollouts = pgTable(
  "agent_rollouts",
  {
    id: text("id").primaryKey(),
    version: text("version").notNull(),
    state: text("state").$type<RolloutState>().notNull(),
    rings: jsonb("rings").$type<RolloutRing[]>().notNull(),
    ring: integer("ring").notNull().default(0),
    ringHosts: jsonb("ring_hosts").$type<string[][]>().notNull().default([]),
    haltedReason: text("halted_reason"),
    actorUserId: userRef("actor_user_id"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    check("agent_rollouts_state_check", sql`${t.state} IN ('running', 'halted', 'completed')`),
    check("agent_rollouts_rings_array_check", sql`jsonb_typeof(${t.rings}) = 'array'`),
    check("agent_rollouts_ring_hosts_array_check", sql`jsonb_typeof(${t.ringHosts}) = 'array'`),
    index("agent_rollouts_running_idx").on(t.state).where(sql`${t.state} = 'running'`),
  ],
);

export type AgentRollout = typeof agentRollouts.$inferSelect;
