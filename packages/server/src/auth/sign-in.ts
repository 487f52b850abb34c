/**
 * @module auth/sign-in
 * Signing in and out over HTTP, shared by the JSON API and the sign-in pages: the session cookie,
 * and the per-address and per-user-at-address limits checked before any password work. Wrong
 * username and wrong password get one answer. Never limited per username alone: then anyone could
 * keep `admin` out from anywhere with a few wrong passwords.
 */
import type { User } from "@fleetback/db";
import type { Context } from "hono";
import { deleteCookie, setCookie } from "hono/cookie";
import type { AppDeps } from "../app-deps.js";
import { writeAudit } from "../audit/audit.js";
import { RequestError } from "../errors.js";
import type { AppEnv } from "../http/app-env.js";
import { clientIp, limitKey } from "../http/client-address.js";
import { bootstrapFirstAdmin } from "./bootstrap.js";
import type { RateLimiter } from "./rate-limit.js";
import {
  createSession,
  deleteSession,
  SESSION_COOKIE,
  type SignInReason,
  sweepSessions,
} from "./sessions.js";
import { hasSsoAdmin } from "./sso-users.js";
import { findUserByName, verifyLogin } from "./users.js";

export interface LoginLimiters {
  byIp: RateLimiter;
  /** Keyed by username and address together (see `userAtAddress`). */
  byUserAndIp: RateLimiter;
}

function userAtAddress(c: Context<AppEnv>, username: string): string {
  return `${username.toLowerCase()}@${limitKey(clientIp(c))}`;
}

/** Starts a session and sets its cookie; shared by the JSON and form sign-in. */
export async function signIn(
  c: Context<AppEnv>,
  deps: AppDeps,
  user: User,
  reason: SignInReason,
): Promise<void> {
  await sweepSessions(deps.db, deps.clock);
  // The provider is asked again after this: the bound on a removal there reaching Fleetback.
  const maxAgeMs = reason === "auth.sso_login" ? deps.config.sso?.sessionMaxMs : undefined;
  const session = await createSession(deps, user, reason, {
    ip: clientIp(c),
    userAgent: c.req.header("User-Agent"),
    maxAgeMs,
  });
  setCookie(c, SESSION_COOKIE, session.token, {
    httpOnly: true,
    sameSite: "Lax",
    secure: deps.config.baseUrl.startsWith("https:"),
    path: "/",
    maxAge: Math.floor((session.expiresAt.getTime() - deps.clock.now().getTime()) / 1000),
  });
}

export async function signOut(c: Context<AppEnv>, deps: AppDeps): Promise<void> {
  const actor = c.get("actor");
  if (actor?.sessionId) {
    await deleteSession(deps.db, actor.sessionId);
  }
  deleteCookie(c, SESSION_COOKIE, { path: "/" });
}

/** Checks the limits before any password work, so a flood costs us nothing. */
export async function checkLoginLimits(
  c: Context<AppEnv>,
  limiters: LoginLimiters,
  username: string,
): Promise<void> {
  for (const [limiter, key] of [
    [limiters.byIp, limitKey(clientIp(c))],
    [limiters.byUserAndIp, userAtAddress(c, username)],
  ] as const) {
    const result = await limiter.hit(key);
    if (!result.allowed) {
      throw new RequestError("rate_limited", "Too many sign-in attempts; wait and try again.", {
        headers: { "Retry-After": String(result.retryAfterSeconds) },
      });
    }
  }
}

export async function attemptLogin(
  c: Context<AppEnv>,
  deps: AppDeps,
  limiters: LoginLimiters,
  username: string,
  password: string,
) {
  if (!(await localLoginAllowed(deps))) {
    throw new RequestError(
      "forbidden",
      `Password sign-in is turned off; sign in with ${deps.config.sso?.displayName ?? "single sign-on"}.`,
    );
  }
  await checkLoginLimits(c, limiters, username);
  const user = await verifyLogin(deps.db, username, password);
  if (!user) {
    await auditFailedLogin(c, deps, username);
    throw new RequestError("unauthorised", "Username or password is wrong.");
  }
  await limiters.byUserAndIp.reset(userAtAddress(c, username));
  await signIn(c, deps, user, "auth.login");
  return user;
}

/**
 * One entry per failed attempt that got past the limits: the limiter already bounds the attempts
 * per address and per user at an address in each window, so a brute force cannot write more rows
 * than it may try passwords, and attempts it refuses are not written. Only an existing user is
 * named (as the target): the typed username is not stored, since a username field sometimes holds
 * a mistyped password, and the typed password never is.
 */
async function auditFailedLogin(c: Context<AppEnv>, deps: AppDeps, username: string): Promise<void> {
  const known = await findUserByName(deps.db, username);
  await writeAudit(deps.db, deps, {
    actor: "system",
    ip: clientIp(c),
    action: "auth.login_failed",
    ...(known ? { targetKind: "user", targetId: known.id } : {}),
    details: { known_user: known !== undefined },
  });
}

/**
 * FLEETBACK_LOCAL_LOGIN=off turns password sign-in off only while an enabled single sign-on
 * admin exists: before the first one signs in (or after the last is disabled), the local admin
 * can still get in to fix the provider's setup.
 */
export async function localLoginAllowed(deps: Pick<AppDeps, "config" | "db">): Promise<boolean> {
  return deps.config.localLogin || !(await hasSsoAdmin(deps.db));
}

export async function attemptBootstrap(
  c: Context<AppEnv>,
  deps: AppDeps,
  input: { bootstrapToken: string; username: string; password: string },
) {
  const user = await bootstrapFirstAdmin(deps, deps.bootstrap, input);
  await signIn(c, deps, user, "auth.bootstrap");
  deps.log.info({ user_id: user.id }, "first admin created; bootstrap token burned");
  return user;
}
