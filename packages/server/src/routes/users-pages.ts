/**
 * @module routes/users-pages
 * The users page (admins only): add a user, change a role, disable one or set a new password for
 * one. Each change ends that user's sessions at once. The JSON twins are in routes/users-api.ts.
 */
import { Hono } from "hono";
import { Type } from "typebox";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, auditOf, requireRole } from "../auth/actor.js";
import { NewUserInput, RoleInput } from "../auth/user-input.js";
import { addUser, listUsers, passwordPolicy, resetPassword, updateUser } from "../auth/users.js";
import { redirectAfterPost, renderPage } from "../http/render.js";
import { readForm } from "../http/validate.js";

const UserChangeForm = Type.Object(
  { role: RoleInput, state: Type.Union([Type.Literal("active"), Type.Literal("disabled")]) },
  { additionalProperties: false },
);

const PasswordResetForm = Type.Object(
  { password: Type.String({ minLength: 1, maxLength: 1024 }) },
  { additionalProperties: false },
);

export function userPageRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const admin = requireRole("admin");

  routes.get("/settings/users", admin, async (c) => {
    return renderPage(c, deps.views, "pages/users.njk", {
      title: "Users",
      users: await listUsers(deps.db),
      resetDone: c.req.query("reset") === "1",
      passwordPolicy,
    });
  });
  routes.post("/settings/users", admin, async (c) => {
    const form = await readForm(c, NewUserInput);
    await addUser(deps, auditOf(c), form);
    return redirectAfterPost(c, "/settings/users");
  });
  routes.post("/settings/users/:id", admin, async (c) => {
    const form = await readForm(c, UserChangeForm);
    await updateUser(deps, auditOf(c), c.req.param("id"), {
      role: form.role,
      disabled: form.state === "disabled",
    });
    return redirectAfterPost(c, "/settings/users");
  });
  routes.post("/settings/users/:id/password", admin, async (c) => {
    const form = await readForm(c, PasswordResetForm);
    await resetPassword(deps, auditOf(c), c.req.param("id"), form.password);
    return redirectAfterPost(c, "/settings/users?reset=1");
  });
  return routes;
}
