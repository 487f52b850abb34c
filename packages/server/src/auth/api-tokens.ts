/**
 * @module auth/api-tokens
 * Personal API tokens for scripts: shown once, stored as SHA-256 only, revocable. A token acts
 * with its user's current role, so demoting a user demotes their tokens too. A token may carry an
 * expiry, after which it is refused exactly like a revoked one.
 */
import { hashToken, randomToken } from "@fleetback/crypto";
import { type ApiToken, apiTokens, type Database, type User, users } from "@fleetback/db";
import { and, desc, eq, isNull } from "drizzle-orm";
import { ulid } from "ulidx";
import type { Clock } from "../clock.js";
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

export async function createApiToken(
  db: Database,
  clock: Clock,
  userId: string,
  name: string,
  expiresAt?: Date,
): Promise<{ token: string; record: ApiTokenView }> {
  const now = clock.now();
  const token = randomToken("fbu");
  const rows = await db
    .insert(apiTokens)
    .values({
      id: ulid(now.getTime()),
      userId,
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
  return { token, record: view(record) };
}

export async function listApiTokens(db: Database, userId: string): Promise<ApiTokenView[]> {
  const rows = await db
    .select()
    .from(apiTokens)
    .where(eq(apiTokens.userId, userId))
    .orderBy(desc(apiTokens.id));
  return rows.map(view);
}

export async function revokeApiToken(db: Database, clock: Clock, userId: string, id: string): Promise<void> {
  const rows = await db
    .update(apiTokens)
    .set({ revokedAt: clock.now() })
    .where(and(eq(apiTokens.id, id), eq(apiTokens.userId, userId), isNull(apiTokens.revokedAt)))
    .returning({ id: apiTokens.id });
  if (rows.length === 0) {
    throw notFound(`No active API token ${id}`);
  }
}

export async function resolveApiToken(db: Database, clock: Clock, token: string): Promise<User | undefined> {
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
  return row.user;
}
