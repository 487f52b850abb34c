/**
 * @module routes/users
 * User management (admins only), as JSON and as the users page. Changing a role, a password or
 * disabling a user ends that user's sessions, so the change takes effect at once.
 */
import { USER_ROLES } from "@fleetback/db";
import { Hono } from "hono";
import { type Static, Type } from "typebox";
import type { AppDeps } from "../app.js";
import { writeAudit } from "../audit/audit.js";
import { type AppEnv, requireRole } from "../auth/actor.js";
import { deleteUserSessions } from "../auth/sessions.js";
import {
  createUser,
  deleteUser,
  listUsers,
  USERNAME_PATTERN,
  type UserPatch,
  updateUser,
} from "../auth/users.js";
import { clientIp, redirectAfterPost, renderPage } from "../http/render.js";
import { readForm, readJson } from "../http/validate.js";
import { userView } from "./auth-api.js";

const Role = Type.Union(USER_ROLES.map((role) => Type.Literal(role)));

const NewUser = Type.Object(
  {
    username: Type.String({ pattern: USERNAME_PATTERN }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
    role: Role,
  },
  { additionalProperties: false },
);

const UserChange = Type.Object(
  {
    role: Type.Optional(Role),
    password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
    disabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

const UserChangeForm = Type.Object(
  { role: Role, state: Type.Union([Type.Literal("active"), Type.Literal("disabled")]) },
  { additionalProperties: false },
);

export function userRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const admin = requireRole("admin");

  async function change(
    actorIp: string | undefined,
    actor: AppEnv["Variables"]["actor"],
    id: string,
    patch: UserPatch,
  ) {
    const user = await updateUser(deps.db, deps.clock, id, patch);
    await deleteUserSessions(deps.db, id);
    await writeAudit(deps.db, deps.clock, {
      actor: actor ?? "system",
      action: "user.update",
      targetKind: "user",
      targetId: id,
      details: { fields: Object.keys(patch).filter((key) => patch[key as keyof UserPatch] !== undefined) },
      ip: actorIp,
    });
    return user;
  }

  async function add(
    actorIp: string | undefined,
    actor: AppEnv["Variables"]["actor"],
    input: Static<typeof NewUser>,
  ) {
    const user = await createUser(deps.db, deps.clock, input);
    await writeAudit(deps.db, deps.clock, {
      actor: actor ?? "system",
      action: "user.create",
      targetKind: "user",
      targetId: user.id,
      details: { role: user.role },
      ip: actorIp,
    });
    return user;
  }

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
    const body = await readJson(c, NewUser);
    const user = await add(clientIp(c), c.get("actor"), body);
    return c.json({ user: userView(user) }, 201);
  });
  routes.put("/api/users/:id", admin, async (c) => {
    const body = await readJson(c, UserChange);
    const user = await change(clientIp(c), c.get("actor"), c.req.param("id"), body);
    return c.json({ user: { ...userView(user), disabled: user.disabledAt !== null } });
  });
  routes.delete("/api/users/:id", admin, async (c) => {
    const id = c.req.param("id");
    await deleteUser(deps.db, id);
    await writeAudit(deps.db, deps.clock, {
      actor: c.get("actor") ?? "system",
      action: "user.delete",
      targetKind: "user",
      targetId: id,
      ip: clientIp(c),
    });
    return c.body(null, 204);
  });

  routes.get("/settings/users", admin, async (c) => {
    return renderPage(c, deps.views, "pages/users.njk", { title: "Users", users: await listUsers(deps.db) });
  });
  routes.post("/settings/users", admin, async (c) => {
    const form = await readForm(c, NewUser);
    await add(clientIp(c), c.get("actor"), form);
    return redirectAfterPost(c, "/settings/users");
  });
  routes.post("/settings/users/:id", admin, async (c) => {
    const form = await readForm(c, UserChangeForm);
    await change(clientIp(c), c.get("actor"), c.req.param("id"), {
      role: form.role,
      disabled: form.state === "disabled",
    });
    return redirectAfterPost(c, "/settings/users");
  });
  return routes;
}
