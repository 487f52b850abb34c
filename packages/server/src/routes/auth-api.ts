/**
 * @module routes/auth-api
 * JSON sign-in for scripts and the first-admin bootstrap. Wrong username and wrong password get
 * one answer; repeated attempts per source address, and per username from one address, get 429.
 * Never per username alone: then anyone could keep `admin` out from anywhere with a few wrong
 * passwords. Guessing from many addresses is bounded by each address's limit and argon2's cost.
 */
import type { UserRole } from "@fleetback/db";
import { type Context, Hono } from "hono";
import { deleteCookie, setCookie } from "hono/cookie";
import { Type } from "typebox";
import type { AppDeps } from "../app.js";
import { writeAudit } from "../audit/audit.js";
import { type AppEnv, requireRole } from "../auth/actor.js";
import { bootstrapFirstAdmin } from "../auth/bootstrap.js";
import type { RateLimiter } from "../auth/rate-limit.js";
import {
  createSession,
  deleteSession,
  SESSION_ABSOLUTE_MS,
  SESSION_COOKIE,
  sweepSessions,
} from "../auth/sessions.js";
import { USERNAME_PATTERN, verifyLogin } from "../auth/users.js";
import { RequestError } from "../errors.js";
import { clientIp } from "../http/render.js";
import { readJson } from "../http/validate.js";

export const Credentials = Type.Object(
  {
    username: Type.String({ minLength: 1, maxLength: 64 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false },
);

export const BootstrapBody = Type.Object(
  {
    bootstrap_token: Type.String({ minLength: 1, maxLength: 256 }),
    username: Type.String({ pattern: USERNAME_PATTERN }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false },
);

export interface LoginLimiters {
  byIp: RateLimiter;
  /** Keyed by username and address together (see `userAtAddress`). */
  byUserAndIp: RateLimiter;
}

function userAtAddress(c: Context<AppEnv>, username: string): string {
  return `${username.toLowerCase()}@${clientIp(c) ?? "unknown"}`;
}

export function userView(user: { id: string; username: string; role: UserRole }) {
  return { id: user.id, username: user.username, role: user.role };
}

/** Starts a session and sets its cookie; shared by the JSON and form sign-in. */
export async function signIn(c: Context<AppEnv>, deps: AppDeps, userId: string): Promise<void> {
  await sweepSessions(deps.db, deps.clock);
  const session = await createSession(deps.db, deps.clock, userId, {
    ip: clientIp(c),
    userAgent: c.req.header("User-Agent"),
  });
  setCookie(c, SESSION_COOKIE, session.token, {
    httpOnly: true,
    sameSite: "Lax",
    secure: deps.config.baseUrl.startsWith("https:"),
    path: "/",
    maxAge: Math.floor(SESSION_ABSOLUTE_MS / 1000),
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
export function checkLoginLimits(c: Context<AppEnv>, limiters: LoginLimiters, username: string): void {
  for (const [limiter, key] of [
    [limiters.byIp, clientIp(c) ?? "unknown"],
    [limiters.byUserAndIp, userAtAddress(c, username)],
  ] as const) {
    const result = limiter.hit(key);
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
  checkLoginLimits(c, limiters, username);
  const user = await verifyLogin(deps.db, username, password);
  if (!user) {
    throw new RequestError("unauthorised", "Username or password is wrong.");
  }
  limiters.byUserAndIp.reset(userAtAddress(c, username));
  await signIn(c, deps, user.id);
  await writeAudit(deps.db, deps.clock, {
    actor: { userId: user.id, username: user.username, role: user.role, via: "session" },
    action: "auth.login",
    targetKind: "user",
    targetId: user.id,
    ip: clientIp(c),
  });
  return user;
}

export async function attemptBootstrap(
  c: Context<AppEnv>,
  deps: AppDeps,
  input: { bootstrapToken: string; username: string; password: string },
) {
  const user = await bootstrapFirstAdmin(deps.db, deps.clock, deps.bootstrap, input);
  await signIn(c, deps, user.id);
  await writeAudit(deps.db, deps.clock, {
    actor: { userId: user.id, username: user.username, role: user.role, via: "session" },
    action: "auth.bootstrap",
    targetKind: "user",
    targetId: user.id,
    ip: clientIp(c),
  });
  deps.log.info({ user_id: user.id }, "first admin created; bootstrap token burned");
  return user;
}

export function authApiRoutes(deps: AppDeps, limiters: LoginLimiters): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  routes.post("/api/auth/bootstrap", async (c) => {
    const body = await readJson(c, BootstrapBody);
    const user = await attemptBootstrap(c, deps, {
      bootstrapToken: body.bootstrap_token,
      username: body.username,
      password: body.password,
    });
    return c.json({ user: userView(user) }, 201);
  });
  routes.post("/api/auth/login", async (c) => {
    const body = await readJson(c, Credentials);
    const user = await attemptLogin(c, deps, limiters, body.username, body.password);
    return c.json({ user: userView(user) });
  });
  routes.post("/api/auth/logout", requireRole("viewer"), async (c) => {
    await signOut(c, deps);
    return c.body(null, 204);
  });
  routes.get("/api/auth/me", requireRole("viewer"), (c) => {
    const actor = c.get("actor");
    return c.json({ user: actor ? { id: actor.userId, username: actor.username, role: actor.role } : null });
  });
  return routes;
}
