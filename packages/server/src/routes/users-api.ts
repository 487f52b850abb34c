/**
 * @module routes/users-api
 * User management as JSON (admins only). Changing a role, a password or disabling a user ends
 * that user's sessions, so the change takes effect at once; so does an admin's password reset. The page is in routes/users-pages.ts.
 */
import { Hono } from "hono";
import { Type } from "typebox";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, auditOf, requireRole } from "../auth/actor.js";
import { NewUserInput, RoleInput } from "../auth/user-input.js";
import { userView } from "../auth/user-view.js";
import { addUser, deleteUser, listUsers, resetPassword, updateUser } from "../auth/users.js";
import { readJson } from "../http/validate.js";

export const UserChange = Type.Object(
  {
    role: Type.Optional(RoleInput),
    password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
    disabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const PasswordReset = Type.Object(
  { password: Type.String({ minLength: 1, maxLength: 1024 }) },
  { additionalProperties: false },
);

export function userApiRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const admin = requireRole("admin");

  routes.get("/api/users", admin, async (c) => {
    const users = await listUsers(deps.db);
    return c.json({
      users: users.map((user) => ({
        ...userView(user),
        disabled: user.disabledAt !== null,
        created_at: user.createdAt,
      })),
    });
  });
  routes.post("/api/users", admin, async (c) => {
    const body = await readJson(c, NewUserInput);
    const user = await addUser(deps, auditOf(c), body);
    return c.json({ user: userView(user) }, 201);
  });
  routes.put("/api/users/:id", admin, async (c) => {
    const body = await readJson(c, UserChange);
    const user = await updateUser(deps, auditOf(c), c.req.param("id"), body);
    return c.json({ user: { ...userView(user), disabled: user.disabledAt !== null } });
  });
  // An admin sets another user's password; that user is signed out everywhere.
  routes.post("/api/users/:id/password", admin, async (c) => {
    const body = await readJson(c, PasswordReset);
    await resetPassword(deps, auditOf(c), c.req.param("id"), body.password);
    return c.body(null, 204);
  });
  routes.delete("/api/users/:id", admin, async (c) => {
    const id = c.req.param("id");
    await deleteUser(deps, auditOf(c), id);
    return c.body(null, 204);
  });
  return routes;
}
