/**
 * @module routes/auth-api
 * JSON sign-in for scripts and the first-admin bootstrap. Sessions and the sign-in limits (429 per
 * source address, and per username from one address) are auth/sign-in.ts, shared with the pages.
 * A signed-in user changes their own password here too (auth/password-change.ts).
 */
import { Hono } from "hono";
import { Type } from "typebox";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, requireRole } from "../auth/actor.js";
import { attemptPasswordChange, createPasswordChangeLimiter } from "../auth/password-change.js";
import { attemptBootstrap, attemptLogin, type LoginLimiters, signOut } from "../auth/sign-in.js";
import { userView } from "../auth/user-view.js";
import { USERNAME_PATTERN } from "../auth/users.js";
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

export const PasswordChangeBody = Type.Object(
  {
    current_password: Type.String({ minLength: 1, maxLength: 1024 }),
    new_password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false },
);

export function authApiRoutes(deps: AppDeps, limiters: LoginLimiters): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const passwordLimiter = createPasswordChangeLimiter(deps);
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
  // Any signed-in user, for their own account; other sessions end, this one stays.
  routes.put("/api/auth/me/password", requireRole("viewer"), async (c) => {
    const body = await readJson(c, PasswordChangeBody);
    await attemptPasswordChange(c, deps, passwordLimiter, {
      currentPassword: body.current_password,
      newPassword: body.new_password,
    });
    return c.body(null, 204);
  });
  return routes;
}
