/**
 * @module routes/auth-pages
 * Sign-in, sign-out, the first-admin page and changing one's own password. Form posts work with htmx (toasts, HX-Redirect)
 * and without it (303 redirects).
 */
import { Hono } from "hono";
import { Type } from "typebox";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, requireRole } from "../auth/actor.js";
import { attemptPasswordChange, createPasswordChangeLimiter } from "../auth/password-change.js";
import {
  attemptBootstrap,
  attemptLogin,
  type LoginLimiters,
  localLoginAllowed,
  signOut,
} from "../auth/sign-in.js";
import { passwordPolicy, USERNAME_PATTERN } from "../auth/users.js";
import { invalid } from "../errors.js";
import { redirectAfterPost, renderPage } from "../http/render.js";
import { safeNext } from "../http/safe-next.js";
import { readForm } from "../http/validate.js";

const LoginForm = Type.Object(
  {
    username: Type.String({ minLength: 1, maxLength: 64 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
    next: Type.Optional(Type.String({ maxLength: 512 })),
  },
  { additionalProperties: false },
);

const BootstrapForm = Type.Object(
  {
    bootstrap_token: Type.String({ minLength: 1, maxLength: 256 }),
    username: Type.String({ pattern: USERNAME_PATTERN }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false },
);

const PasswordChangeForm = Type.Object(
  {
    current_password: Type.String({ minLength: 1, maxLength: 1024 }),
    new_password: Type.String({ minLength: 1, maxLength: 1024 }),
    confirm_password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false },
);

export function authPageRoutes(deps: AppDeps, limiters: LoginLimiters): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const passwordLimiter = createPasswordChangeLimiter(deps);
  routes.get("/bootstrap", (c) => {
    if (deps.bootstrap.token === undefined) {
      return c.redirect("/login", 303);
    }
    return renderPage(c, deps.views, "pages/bootstrap.njk", {
      token: c.req.query("token") ?? "",
      passwordPolicy,
    });
  });
  routes.post("/bootstrap", async (c) => {
    const form = await readForm(c, BootstrapForm);
    await attemptBootstrap(c, deps, {
      bootstrapToken: form.bootstrap_token,
      username: form.username,
      password: form.password,
    });
    return redirectAfterPost(c, "/");
  });
  routes.get("/login", async (c) => {
    if (deps.bootstrap.token !== undefined) {
      return c.redirect("/bootstrap", 303);
    }
    const next = safeNext(c.req.query("next"), deps.config.baseUrl);
    const sso = deps.config.sso;
    return renderPage(c, deps.views, "pages/login.njk", {
      next,
      localLogin: await localLoginAllowed(deps),
      sso:
        sso === undefined
          ? undefined
          : { name: sso.displayName, href: `/auth/sso?next=${encodeURIComponent(next)}` },
    });
  });
  routes.post("/login", async (c) => {
    const form = await readForm(c, LoginForm);
    await attemptLogin(c, deps, limiters, form.username, form.password);
    return redirectAfterPost(c, safeNext(form.next, deps.config.baseUrl));
  });
  routes.get("/account/password", requireRole("viewer"), (c) => {
    return renderPage(c, deps.views, "pages/account-password.njk", {
      title: "Change password",
      changed: c.req.query("changed") === "1",
      passwordPolicy,
    });
  });
  routes.post("/account/password", requireRole("viewer"), async (c) => {
    const form = await readForm(c, PasswordChangeForm);
    if (form.confirm_password !== form.new_password) {
      throw invalid("confirm_password: does not match the new password");
    }
    await attemptPasswordChange(c, deps, passwordLimiter, {
      currentPassword: form.current_password,
      newPassword: form.new_password,
    });
    return redirectAfterPost(c, "/account/password?changed=1");
  });
  routes.post("/logout", requireRole("viewer"), async (c) => {
    await signOut(c, deps);
    return redirectAfterPost(c, "/login");
  });
  return routes;
}
