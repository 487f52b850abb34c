/**
 * @module routes/users-api
 * User management as JSON (admins only). Changing a role, a password or disabling a user ends
 * that user's sessions, so the change takes effect at once; so does an admin's password reset. The page is in routes/users-pages.ts.
 */

import type { Hono } from "hono";
import { Type } from "typebox";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, auditOf } from "../auth/actor.js";
import { NewUserInput, RoleInput } from "../auth/user-input.js";
import { userView } from "../auth/user-view.js";
import { addUser, deleteUser, listUsers, resetPassword, updateUser } from "../auth/users.js";
import { UserAnswer, UserChanged, UserList } from "../openapi/account-schemas.js";
import { actOnPathId, apiGroup, NO_CONTENT } from "../openapi/api-route.js";

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

/** A user as admins manage it: also whether it may still sign in. */
function managedUserView(user: Parameters<typeof userView>[0] & { disabledAt: Date | null }) {
  return { ...userView(user), disabled: user.disabledAt !== null };
}

export const USER_API = apiGroup<AppDeps>({ tag: "Users" });

USER_API.add({
  id: "listUsers",
  method: "get",
  path: "/api/users",
  summary: "List users",
  access: "admin",
  responses: { 200: { description: "Every user.", schema: UserList } },
  handler: async (c, _input, deps) => {
    const users = await listUsers(deps.db);
    return c.json({ users: users.map((user) => ({ ...managedUserView(user), created_at: user.createdAt })) });
  },
});

USER_API.add({
  id: "createUser",
  method: "post",
  path: "/api/users",
  summary: "Add a user",
  access: "admin",
  body: NewUserInput,
  responses: { 201: { description: "The new user.", schema: UserAnswer } },
  errors: { 409: "The username is taken." },
  handler: async (c, { body }, deps) => {
    const user = await addUser(deps, auditOf(c), body);
    return c.json({ user: userView(user) }, 201);
  },
});

USER_API.add({
  id: "updateUser",
  method: "put",
  path: "/api/users/:id",
  summary: "Change a user's role, password or disabled flag",
  description: "The user's sessions end, so the change takes effect at once.",
  access: "admin",
  body: UserChange,
  responses: { 200: { description: "The user as changed.", schema: UserChanged } },
  errors: { 409: "The last enabled admin cannot be demoted or disabled." },
  handler: async (c, { body }, deps) => {
    const user = await updateUser(deps, auditOf(c), c.req.param("id"), body);
    return c.json({ user: managedUserView(user) });
  },
});

// An admin sets another user's password; that user is signed out everywhere.
USER_API.add({
  id: "resetUserPassword",
  method: "post",
  path: "/api/users/:id/password",
  summary: "Set another user's password",
  description: "That user is signed out everywhere.",
  access: "admin",
  body: PasswordReset,
  responses: NO_CONTENT,
  errors: { 409: "Your own password is changed with PUT /api/auth/me/password." },
  handler: async (c, { body }, deps) => {
    await resetPassword(deps, auditOf(c), c.req.param("id"), body.password);
    return c.body(null, 204);
  },
});

USER_API.add({
  id: "deleteUser",
  method: "delete",
  path: "/api/users/:id",
  summary: "Delete a user",
  access: "admin",
  responses: NO_CONTENT,
  errors: { 409: "The last enabled admin cannot be deleted." },
  handler: actOnPathId(deleteUser),
});

export function userApiRoutes(deps: AppDeps): Hono<AppEnv> {
  return USER_API.routes(deps);
}
