/**
 * @module routes/recovery-kit
 * The recovery kit of one host or of the whole fleet: JSON from the API, one Markdown file from
 * the pages, each behind the admin role and a fresh proof of identity (auth/step-up.ts). A
 * refused page form is shown again with the reason; the kit itself is built in recovery/.
 */
import { users } from "@fleetback/db";
import { eq } from "drizzle-orm";
import { type Context, Hono } from "hono";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, actorOf, requireRole } from "../auth/actor.js";
import { createStepUpLimiter, SSO_SIGN_IN_PATH, STEP_UP_SSO_MAX_AGE_MS } from "../auth/step-up.js";
import { RequestError } from "../errors.js";
import { requireHost } from "../hosts/require-host.js";
import { renderPage } from "../http/render.js";
import { readForm, readJson } from "../http/validate.js";
import { noStore, RecoveryKitBody, stepUpAndExport } from "../recovery/kit-request.js";
import { kitFileName, kitText } from "../recovery/kit-text.js";
import type { KitScope } from "../recovery/recovery-kit.js";

export function recoveryKitRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const admin = requireRole("admin");
  const limiter = createStepUpLimiter(deps);

  const answerJson = async (c: Context<AppEnv>, scope: KitScope) => {
    const body = await readJson(c, RecoveryKitBody);
    const kit = await stepUpAndExport(c, deps, limiter, scope, body.password);
    return c.json({ kit, text: kitText(kit) });
  };
  routes.post("/api/hosts/:id/recovery-kit", admin, (c) =>
    answerJson(c, { kind: "host", hostId: c.req.param("id") }),
  );
  routes.post("/api/recovery-kit", admin, (c) => answerJson(c, { kind: "fleet" }));

  const formPage = async (c: Context<AppEnv>, scope: KitScope, error?: RequestError) => {
    noStore(c);
    const host = scope.kind === "host" ? await requireHost(deps.db, scope.hostId) : undefined;
    const [user] = await deps.db
      .select({ ssoSubject: users.ssoSubject })
      .from(users)
      .where(eq(users.id, actorOf(c).userId));
    const action = host ? `/hosts/${host.id}/recovery-kit` : "/recovery-kit";
    return renderPage(
      c,
      deps.views,
      "pages/recovery-kit.njk",
      {
        title: host ? `Recovery kit: ${host.name}` : "Recovery kit: whole fleet",
        host,
        action,
        sso: user?.ssoSubject != null,
        ssoMinutes: STEP_UP_SSO_MAX_AGE_MS / 60_000,
        ssoSignInHref: `${SSO_SIGN_IN_PATH}?next=${encodeURIComponent(action)}`,
        error: error?.message,
      },
      error ? 403 : 200,
    );
  };
  const download = async (c: Context<AppEnv>, scope: KitScope) => {
    const form = await readForm(c, RecoveryKitBody);
    try {
      const kit = await stepUpAndExport(c, deps, limiter, scope, form.password);
      c.header("Content-Disposition", `attachment; filename="${kitFileName(kit)}"`);
      c.header("Content-Type", "text/markdown; charset=utf-8");
      return c.body(kitText(kit));
    } catch (error) {
      if (error instanceof RequestError && error.code === "forbidden") {
        return formPage(c, scope, error);
      }
      throw error;
    }
  };
  routes.get("/hosts/:id/recovery-kit", admin, (c) =>
    formPage(c, { kind: "host", hostId: c.req.param("id") }),
  );
  routes.post("/hosts/:id/recovery-kit", admin, (c) =>
    download(c, { kind: "host", hostId: c.req.param("id") }),
  );
  routes.get("/recovery-kit", admin, (c) => formPage(c, { kind: "fleet" }));
  routes.post("/recovery-kit", admin, (c) => download(c, { kind: "fleet" }));
  return routes;
}
