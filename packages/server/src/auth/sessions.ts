/**
 * @module auth/sessions
 * Browser sessions: a random token in an HttpOnly cookie, stored only as its SHA-256 hash.
 * A session ends after 12 h without use or 7 d after sign-in, whichever comes first; a single
 * sign-on session sooner (FLEETBACK_OIDC_SESSION_MAX), so that someone removed at the provider is
 * out within that time. A local-password session ends once password sign-in is turned off.
 */
import { hashToken, randomToken } from "@fleetback/crypto";
import { type Database, sessions, type User, users } from "@fleetback/db";
import { and, eq, lt, ne, or } from "drizzle-orm";
import { writeAudit } from "../audit/audit.js";
import type { Clock } from "../clock.js";
import type { ServerDeps } from "../deps.js";

export const SESSION_COOKIE = "fleetback_session";
export const SESSION_IDLE_MS = 12 * 60 * 60 * 1000;
export const SESSION_ABSOLUTE_MS = 7 * 24 * 60 * 60 * 1000;
/** last_seen_at is refreshed at most this often, so reading pages does not write on every request. */
const TOUCH_INTERVAL_MS = 60 * 1000;

/** The audit action of a sign-in: a password, the first admin's bootstrap, or single sign-on. */
export type SignInReason = "auth.login" | "auth.bootstrap" | "auth.sso_login";

export interface NewSessionResult {
  token: string;
  csrfToken: string;
  expiresAt: Date;
}

/**
 * Signs `user` in; `reason` is the audit action (a password sign-in or the first admin's), written
 * in the session's transaction.
 */
export async function createSession(
  deps: Pick<ServerDeps, "db" | "clock" | "ids">,
  user: Pick<User, "id" | "username" | "role">,
  reason: SignInReason,
  meta: { ip?: string | undefined; userAgent?: string | undefined; maxAgeMs?: number | undefined } = {},
): Promise<NewSessionResult> {
  const now = deps.clock.now();
  const token = randomToken("fbs");
  const csrfToken = randomToken("fbs").slice(4);
  const expiresAt = new Date(
    now.getTime() + Math.min(meta.maxAgeMs ?? SESSION_ABSOLUTE_MS, SESSION_ABSOLUTE_MS),
  );
  await deps.db.transaction(async (tx) => {
    await tx.insert(sessions).values({
      id: deps.ids.ulid(now),
      tokenHash: hashToken(token),
      userId: user.id,
      csrfToken,
      createdAt: now,
      lastSeenAt: now,
      expiresAt,
      ip: meta.ip?.slice(0, 64),
      userAgent: meta.userAgent?.slice(0, 256),
    });
    await writeAudit(tx, deps, {
      actor: { userId: user.id, username: user.username, role: user.role, via: "session" },
      action: reason,
      targetKind: "user",
      targetId: user.id,
      ip: meta.ip,
    });
  });
  return { token, csrfToken, expiresAt };
}

export interface ResolvedSession {
  sessionId: string;
  csrfToken: string;
  user: User;
}

export async function resolveSession(
  db: Database,
  clock: Clock,
  token: string,
): Promise<ResolvedSession | undefined> {
  const now = clock.now();
  const rows = await db
    .select({ session: sessions, user: users })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(eq(sessions.tokenHash, hashToken(token)))
    .limit(1);
  const row = rows[0];
  if (!row) {
    return undefined;
  }
  const idleExpired = now.getTime() - row.session.lastSeenAt.getTime() > SESSION_IDLE_MS;
  if (idleExpired || row.session.expiresAt <= now || row.user.disabledAt !== null) {
    await db.delete(sessions).where(eq(sessions.id, row.session.id));
    return undefined;
  }
  if (now.getTime() - row.session.lastSeenAt.getTime() > TOUCH_INTERVAL_MS) {
    await db.update(sessions).set({ lastSeenAt: now }).where(eq(sessions.id, row.session.id));
  }
  return { sessionId: row.session.id, csrfToken: row.session.csrfToken, user: row.user };
}

export async function deleteSession(db: Database, sessionId: string): Promise<void> {
  await db.delete(sessions).where(eq(sessions.id, sessionId));
}

/** Ends every session of a user (password change, role change, disable). */
export async function deleteUserSessions(db: Database, userId: string): Promise<void> {
  await db.delete(sessions).where(eq(sessions.userId, userId));
}

/** Ends every session of a user but `keep` (the one changing its own password). */
export async function deleteOtherSessions(
  db: Database,
  userId: string,
  keep: string | undefined,
): Promise<void> {
  await db
    .delete(sessions)
    .where(
      keep === undefined
        ? eq(sessions.userId, userId)
        : and(eq(sessions.userId, userId), ne(sessions.id, keep)),
    );
}

/** Removes expired sessions; called opportunistically on sign-in. */
export async function sweepSessions(db: Database, clock: Clock): Promise<void> {
  const now = clock.now();
  await db
    .delete(sessions)
    .where(
      or(lt(sessions.expiresAt, now), lt(sessions.lastSeenAt, new Date(now.getTime() - SESSION_IDLE_MS))),
    );
}
