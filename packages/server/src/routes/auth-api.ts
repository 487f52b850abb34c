/**
 * @module routes/auth-api
 * JSON sign-in for scripts and the first-admin bootstrap. Sessions and the sign-in limits (429 per
 * source address, and per username from one address) are auth/sign-in.ts, shared with the pages.
 * A signed-in user changes their own password here too (auth/password-change.ts).
 */

import type { Hono } from "hono";
import { Type } from "typebox";
import type { AppDeps } from "../app-deps.js";
import type { AppEnv } from "../auth/actor.js";
import { attemptPasswordChange, createPasswordChangeLimiter } from "../auth/password-change.js";
import type { RateLimiter } from "../auth/rate-limit.js";
import { attemptBootstrap, attemptLogin, type LoginLimiters, signOut } from "../auth/sign-in.js";
import { userView } from "../auth/user-view.js";
import { USERNAME_PATTERN } from "../auth/users.js";
import { MeAnswer, UserAnswer } from "../openapi/account-schemas.js";
import { apiGroup, NO_CONTENT } from "../openapi/api-route.js";

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

export const PasswordChangeBody = Type.Object(
  {
    current_password: Type.String({ minLength: 1, maxLength: 1024 }),
    new_password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false },
);

/** What the sign-in routes share with the pages: the limiters are per app, not per route module. */
interface AuthContext {
  deps: AppDeps;
  limiters: LoginLimiters;
  passwordLimiter: RateLimiter;
}

export const AUTH_API = apiGroup<AuthContext>({ tag: "Auth" });

AUTH_API.add({
  id: "bootstrap",
  method: "post",
  path: "/api/auth/bootstrap",
  summary: "Create the first admin with the bootstrap token",
  description: "Only while no user exists; signs the new admin in (sets the session cookie).",
  access: "public",
  body: BootstrapBody,
  responses: { 201: { description: "The admin, signed in.", schema: UserAnswer } },
  errors: { 401: "The bootstrap token is wrong.", 409: "An admin already exists." },
  handler: async (c, { body }, { deps }) => {
    const user = await attemptBootstrap(c, deps, {
      bootstrapToken: body.bootstrap_token,
      username: body.username,
      password: body.password,
    });
    return c.json({ user: userView(user) }, 201);
  },
});

AUTH_API.add({
  id: "login",
  method: "post",
  path: "/api/auth/login",
  summary: "Sign in",
  description: "Sets the `fleetback_session` cookie (HttpOnly, 12 h idle, 7 days at most).",
  access: "public",
  body: Credentials,
  responses: { 200: { description: "Signed in.", schema: UserAnswer } },
  errors: {
    401: "Username or password is wrong.",
    429: "Too many attempts from this address or for this user.",
  },
  handler: async (c, { body }, { deps, limiters }) => {
    const user = await attemptLogin(c, deps, limiters, body.username, body.password);
    return c.json({ user: userView(user) });
  },
});

AUTH_API.add({
  id: "logout",
  method: "post",
  path: "/api/auth/logout",
  summary: "Sign out (ends this session)",
  access: "viewer",
  responses: NO_CONTENT,
  handler: async (c, _input, { deps }) => {
    await signOut(c, deps);
    return c.body(null, 204);
  },
});

AUTH_API.add({
  id: "getMe",
  method: "get",
  path: "/api/auth/me",
  summary: "Who the caller is",
  access: "viewer",
  responses: { 200: { description: "The caller.", schema: MeAnswer } },
  handler: (c) => {
    const actor = c.get("actor");
    return c.json({ user: actor ? { id: actor.userId, username: actor.username, role: actor.role } : null });
  },
});

// Any signed-in user, for their own account; other sessions end, this one stays.
AUTH_API.add({
  id: "changeMyPassword",
  method: "put",
  path: "/api/auth/me/password",
  summary: "Change your own password",
  description: "Your other sessions end; this one stays.",
  access: "viewer",
  body: PasswordChangeBody,
  responses: NO_CONTENT,
  errors: { 429: "Too many wrong current passwords." },
  handler: async (c, { body }, { deps, passwordLimiter }) => {
    await attemptPasswordChange(c, deps, passwordLimiter, {
      currentPassword: body.current_password,
      newPassword: body.new_password,
    });
    return c.body(null, 204);
  },
});

export function authApiRoutes(deps: AppDeps, limiters: LoginLimiters): Hono<AppEnv> {
  return AUTH_API.routes({ deps, limiters, passwordLimiter: createPasswordChangeLimiter(deps) });
}
