/**
 * @module Operators: users, their browser sessions and their API tokens.
 *
 * Session and API tokens are stored only as SHA-256 hex hashes, so the database holds no usable token.
 */
import { sql } from "drizzle-orm";
import { check, index, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { createdAt, timestamptz } from "./columns.js";

export const USER_ROLES = ["admin", "operator", "viewer"] as const;
export type UserRole = (typeof USER_ROLES)[number];

export const users = pgTable(
  "users",
  {
    id: text("id").primaryKey(),
    username: text("username").notNull(),
    /** Null for a single sign-on user, who signs in only through the provider. */
    passwordHash: text("password_hash"),
    role: text("role").$type<UserRole>().notNull(),
    createdAt: createdAt(),
    disabledAt: timestamptz("disabled_at"),
    /** The OpenID provider's issuer and subject of a single sign-on user (migration 0013). */
    ssoIssuer: text("sso_issuer"),
    ssoSubject: text("sso_subject"),
  },
  (t) => [
    // "Admin" and "admin" are one login name.
    uniqueIndex("users_username_lower_key").on(sql`lower(${t.username})`),
    check("users_role_check", sql`${t.role} in ('admin', 'operator', 'viewer')`),
    check(
      "users_sso_check",
      sql`(${t.ssoIssuer} IS NULL) = (${t.ssoSubject} IS NULL) AND (${t.passwordHash} IS NOT NULL OR ${t.ssoSubject} IS NOT NULL)`,
    ),
    uniqueIndex("users_sso_key").on(t.ssoIssuer, t.ssoSubject).where(sql`${t.ssoSubject} IS NOT NULL`),
  ],
);

export const sessions = pgTable(
  "sessions",
  {
    id: text("id").primaryKey(),
    tokenHash: text("token_hash").notNull().unique("sessions_token_hash_key"),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    // Kept in clear because every rendered form must embed it; alone it grants nothing.
    csrfToken: text("csrf_token").notNull(),
    createdAt: createdAt(),
    lastSeenAt: timestamptz("last_seen_at").notNull().defaultNow(),
    expiresAt: timestamptz("expires_at").notNull(),
    ip: text("ip"),
    userAgent: text("user_agent"),
  },
  (t) => [index("sessions_user_id_idx").on(t.userId), index("sessions_expires_at_idx").on(t.expiresAt)],
);

export const apiTokens = pgTable(
  "api_tokens",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    tokenHash: text("token_hash").notNull().unique("api_tokens_token_hash_key"),
    createdAt: createdAt(),
    lastUsedAt: timestamptz("last_used_at"),
    revokedAt: timestamptz("revoked_at"),
    /** Refused from this moment on, like a revoked token; null never expires. */
    expiresAt: timestamptz("expires_at"),
  },
  (t) => [index("api_tokens_user_id_idx").on(t.userId)],
);

export type User = typeof users.$inferSelect;
export type NewUser = typeof users.$inferInsert;
export type Session = typeof sessions.$inferSelect;
export type NewSession = typeof sessions.$inferInsert;
export type ApiToken = typeof apiTokens.$inferSelect;
export type NewApiToken = typeof apiTokens.$inferInsert;
