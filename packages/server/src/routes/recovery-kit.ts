/**
 * @module routes/recovery-kit
 * The recovery kit of one host or of the whole fleet: JSON from the API, one Markdown file from
 * the pages, each behind the admin role and a fresh proof of identity (auth/step-up.ts). A
 * refused page form is shown again with the reason; the kit itself is built in recovery/.
 */

import { users } from "@fleetback/db";
import { eq } from "drizzle-orm";
import type { Context, Hono } from "hono";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, actorOf, requireRole } from "../auth/actor.js";
import type { RateLimiter } from "../auth/rate-limit.js";
import { createStepUpLimiter, SSO_SIGN_IN_PATH, STEP_UP_SSO_MAX_AGE_MS } from "../auth/step-up.js";
import { RequestError } from "../errors.js";
import { requireHost } from "../hosts/require-host.js";
import { renderPage } from "../http/render.js";
import { readForm } from "../http/validate.js";
import { apiGroup } from "../openapi/api-route.js";
import { RecoveryKitAnswer } from "../openapi/recovery-kit-schemas.js";
import { noStore, RecoveryKitBody, stepUpAndExport } from "../recovery/kit-request.js";
import { kitFileName, kitText } from "../recovery/kit-text.js";
import type { KitScope } from "../recovery/recovery-kit.js";

/** The step-up limiter is one per app, shared by the JSON routes and the download form. */
interface KitContext {
  deps: AppDeps;
  limiter: RateLimiter;
}

async function answerJson(
  c: Context<AppEnv>,
  deps: AppDeps,
  limiter: RateLimiter,
  scope: KitScope,
  password: string | undefined,
) {
  const kit = await stepUpAndExport(c, deps, limiter, scope, password);
  return c.json({ kit, text: kitText(kit) });
}

const STEP_UP =
  "Admins only, signed in to the web interface (an API token is refused: it has no person to confirm). " +
  "`password` is the caller's own password, typed again; a single sign-on user instead needs a sign-in within the last 10 minutes. " +
  "Each export is audited as `recovery_kit.export` with the host ids, each refusal as `recovery_kit.export_refused`; " +
  "the answer holds the repository passwords and is sent with `Cache-Control: no-store`.";

const ERRORS = {
  403: "Not an admin, an API token, a wrong or missing password, or a single sign-on too long ago.",
  429: "Too many wrong passwords.",
} as const;

export const RECOVERY_KIT_API = apiGroup<KitContext>({ tag: "Recovery" });

RECOVERY_KIT_API.add({
  id: "exportHostRecoveryKit",
  method: "post",
  path: "/api/hosts/:id/recovery-kit",
  summary: "One host's recovery kit",
  description: STEP_UP,
  access: "admin",
  params: { id: "The host's id." },
  body: RecoveryKitBody,
  responses: {
    200: { description: "The kit, as data and as the Markdown file.", schema: RecoveryKitAnswer },
  },
  errors: ERRORS,
  handler: (c, { body }, { deps, limiter }) =>
    answerJson(c, deps, limiter, { kind: "host", hostId: c.req.param("id") }, body.password),
});

RECOVERY_KIT_API.add({
  id: "exportFleetRecoveryKit",
  method: "post",
  path: "/api/recovery-kit",
  summary: "The whole fleet's recovery kit",
  description: STEP_UP,
  access: "admin",
  body: RecoveryKitBody,
  responses: {
    200: { description: "The kit, as data and as the Markdown file.", schema: RecoveryKitAnswer },
  },
  errors: ERRORS,
  handler: (c, { body }, { deps, limiter }) => answerJson(c, deps, limiter, { kind: "fleet" }, body.password),
});

export function recoveryKitRoutes(deps: AppDeps): Hono<AppEnv> {
  const limiter = createStepUpLimiter(deps);
  const routes = RECOVERY_KIT_API.routes({ deps, limiter });
  const admin = requireRole("admin");

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
