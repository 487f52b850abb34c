/**
 * @module routes/api-tokens-pages
 * The page of each user's own API tokens: create one (its secret shown once), list, revoke. The
 * JSON twins are in routes/api-tokens-api.ts.
 */
import { Hono } from "hono";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, actorOf, auditOf, requireRole } from "../auth/actor.js";
import { createApiTokenFromInput, NewApiTokenInput } from "../auth/api-token-input.js";
import { type ApiTokenView, isExpired, listApiTokens, revokeApiToken } from "../auth/api-tokens.js";
import { clientIp, redirectAfterPost, renderPage } from "../http/render.js";
import { readForm } from "../http/validate.js";

export function apiTokenPageRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const viewer = requireRole("viewer");

  /** The page's rows: the record plus whether it has expired by now. */
  const pageRows = (tokens: ApiTokenView[]) =>
    tokens.map((token) => ({ ...token, expired: isExpired(token, deps.clock.now()) }));

  routes.get("/settings/tokens", viewer, async (c) => {
    const tokens = await listApiTokens(deps.db, actorOf(c).userId);
    return renderPage(c, deps.views, "pages/tokens.njk", { title: "API tokens", tokens: pageRows(tokens) });
  });
  routes.post("/settings/tokens", viewer, async (c) => {
    const form = await readForm(c, NewApiTokenInput);
    const actor = actorOf(c);
    const created = await createApiTokenFromInput(deps, { actor, ip: clientIp(c) }, form);
    // Rendered directly (not redirected) so the secret is shown once and never travels in a URL.
    const tokens = await listApiTokens(deps.db, actor.userId);
    return renderPage(c, deps.views, "pages/tokens.njk", {
      title: "API tokens",
      tokens: pageRows(tokens),
      newToken: created.token,
    });
  });
  routes.post("/settings/tokens/:id/revoke", viewer, async (c) => {
    await revokeApiToken(deps, auditOf(c), c.req.param("id"));
    return redirectAfterPost(c, "/settings/tokens");
  });
  return routes;
}
