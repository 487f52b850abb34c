/**
 * @module auth/api-tokens
 * Personal API tokens for scripts: shown once, stored as SHA-256 only, revocable. A token acts
 * with its user's current role, so demoting a user demotes their tokens too. A token may carry an
 * expiry, after which it is refused exactly like a revoked one.
 */
import { hashToken, randomToken } from "@fleetback/crypto";
import { type ApiToken, apiTokens, type Database, type User, users } from "@fleetback/db";
import { and, desc, eq, isNull } from "drizzle-orm";
import { type AuditContext, writeAudit } from "../audit/audit.js";
import type { Clock } from "../clock.js";
import type { ServerDeps } from "../deps.js";
import { invalid, notFound } from "../errors.js";

const TOUCH_INTERVAL_MS = 60 * 1000;

export type ApiTokenView = Omit<ApiToken, "tokenHash">;

function view(token: ApiToken): ApiTokenView {
  const { tokenHash: _hidden, ...rest } = token;
  return rest;
}

export function isExpired(token: Pick<ApiToken, "expiresAt">, now: Date): boolean {
  return token.expiresAt !== null && token.expiresAt.getTime() <= now.getTime();
}

/**
 * Reads the optional `expires_at` of a new token: a date (`2027-01-31`, the end of that day in
 * UTC) or a date-time with a zone, in the future. Empty means no expiry (what a blank form sends).
 */
export function parseExpiry(value: string | undefined, now: Date): Date | undefined {
  if (value === undefined || value.trim() === "") {
    return undefined;
  }
  const text = value.trim();
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(text);
  const withZone = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(text);
  const parsed = dateOnly ? new Date(`${text}T23:59:59.999Z`) : withZone ? new Date(text) : undefined;
  // Date rolls 2027-02-30 over into March; a day that does not read back the same is not one.
  const valid = parsed !== undefined && !Number.isNaN(parsed.getTime());
  if (!valid || (dateOnly && parsed.toISOString().slice(0, 10) !== text)) {
    throw invalid("expires_at: must be a date (YYYY-MM-DD) or a date-time with a zone (ISO 8601)");
  }
  if (parsed.getTime() <= now.getTime()) {
    throw invalid("expires_at: must be in the future");
  }
  return parsed;
}

type TokenDeps = Pick<ServerDeps, "db" | "clock" | "ids">;

/** A token of the acting user, audited in the same transaction. */
export async function createApiToken(
  deps: TokenDeps,
  audit: AuditContext,
  name: string,
  expiresAt?: Date,
): Promise<{ token: string; record: ApiTokenView }> {
  const now = deps.clock.now();
  const token = randomToken("fbu");
  return deps.db.transaction(async (tx) => {
    const rows = await tx
      .insert(apiTokens)
      .values({
        id: deps.ids.ulid(now),
        userId: audit.actor.userId,
        name,
        tokenHash: hashToken(token),
        createdAt: now,
        expiresAt: expiresAt ?? null,
      })
      .returning();
    const record = rows[0];
    if (!record) {
      throw new Error("insert returned no row");
    }
    await writeAudit(tx, deps, {
      ...audit,
      action: "api_token.create",
      targetKind: "api_token",
      targetId: record.id,
      ...(expiresAt ? { details: { expires_at: expiresAt.toISOString() } } : {}),
    });
    return { token, record: view(record) };
  });
}

export async function listApiTokens(db: Database, userId: string): Promise<ApiTokenView[]> {
  const rows = await db
    .select()
    .from(apiTokens)
    .where(eq(apiTokens.userId, userId))
    .orderBy(desc(apiTokens.id));
  return rows.map(view);
}

/** Revokes one of the acting user's own active tokens. */
export async function revokeApiToken(deps: TokenDeps, audit: AuditContext, id: string): Promise<void> {
  await deps.db.transaction(async (tx) => {
    const rows = await tx
      .update(apiTokens)
      .set({ revokedAt: deps.clock.now() })
      .where(and(eq(apiTokens.id, id), eq(apiTokens.userId, audit.actor.userId), isNull(apiTokens.revokedAt)))
      .returning({ id: apiTokens.id });
    if (rows.length === 0) {
      throw notFound(`No active API token ${id}`);
    }
    await writeAudit(tx, deps, {
      ...audit,
      action: "api_token.revoke",
      targetKind: "api_token",
      targetId: id,
    });
  });
}

/** The token's user, and when the token expires (null: never). */
export async function resolveApiToken(
  db: Database,
  clock: Clock,
  token: string,
): Promise<{ user: User; expiresAt: Date | null } | undefined> {
  const rows = await db
    .select({ token: apiTokens, user: users })
    .from(apiTokens)
    .innerJoin(users, eq(users.id, apiTokens.userId))
    .where(and(eq(apiTokens.tokenHash, hashToken(token)), isNull(apiTokens.revokedAt)))
    .limit(1);
  const row = rows[0];
  const now = clock.now();
  if (!row || row.user.disabledAt !== null || isExpired(row.token, now)) {
    return undefined;
  }
  if (!row.token.lastUsedAt || now.getTime() - row.token.lastUsedAt.getTime() > TOUCH_INTERVAL_MS) {
    await db.update(apiTokens).set({ lastUsedAt: now }).where(eq(apiTokens.id, row.token.id));
  }
  return { user: row.user, expiresAt: row.token.expiresAt };
}
