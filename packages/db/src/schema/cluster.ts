/**
 * @module Server replicas sharing one PostgreSQL: their heartbeats, which replica holds each
 * host's socket, and NOTIFY payloads too large for NOTIFY (migration 0007).
 */
import { sql } from "drizzle-orm";
import { check, index, integer, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { createdAt, timestamptz } from "./columns.js";
import { hostIdKey } from "./references.js";

export const serverReplicas = pgTable("server_replicas", {
  id: text("id").primaryKey(),
  startedAt: timestamptz("started_at").notNull().defaultNow(),
  // Written with the database's clock, so replicas with skewed clocks agree on who is alive.
  heartbeatAt: timestamptz("heartbeat_at").notNull().defaultNow(),
});

export const hostConnections = pgTable(
  "host_connections",
  {
    hostId: hostIdKey(),
    replicaId: text("replica_id")
      .notNull()
      .references(() => serverReplicas.id, { onDelete: "cascade" }),
    // Tells this connection from the host's next one, so a late cleanup never removes a newer row.
    connectionId: text("connection_id").notNull(),
    connectedAt: timestamptz("connected_at").notNull().defaultNow(),
  },
  (t) => [index("host_connections_replica_id_idx").on(t.replicaId)],
);

export const clusterMessages = pgTable(
  "cluster_messages",
  {
    id: text("id").primaryKey(),
    payload: text("payload").notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("cluster_messages_created_at_idx").on(t.createdAt)],
);

/** Fixed-window counters shared by the replicas (sign-in and announce limits). */
export const rateLimits = pgTable(
  "rate_limits",
  {
    scope: text("scope").notNull(),
    // SHA-256 of the key (an address, a username at an address), never the key itself.
    keyHash: text("key_hash").notNull(),
    windowStart: timestamptz("window_start").notNull(),
    count: integer("count").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.scope, t.keyHash] }),
    check("rate_limits_count_check", sql`${t.count} >= 0`),
  ],
);
