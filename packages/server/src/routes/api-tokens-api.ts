/**
 * @module routes/api-tokens-api
 * Each user's own API tokens as JSON: created and shown once, listed without their secret,
 * revoked. The page is in routes/api-tokens-pages.ts.
 */
import { Hono } from "hono";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, actorOf, auditOf, requireRole } from "../auth/actor.js";
import { createApiTokenFromInput, NewApiTokenInput } from "../auth/api-token-input.js";
import { type ApiTokenView, isExpired, listApiTokens, revokeApiToken } from "../auth/api-tokens.js";
import { readJson } from "../http/validate.js";

export function apiTokenApiRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const viewer = requireRole("viewer");

  const view = (token: ApiTokenView) => ({
    id: token.id,
    name: token.name,
    created_at: token.createdAt,
    last_used_at: token.lastUsedAt,
    revoked_at: token.revokedAt,
    expires_at: token.expiresAt,
    expired: isExpired(token, deps.clock.now()),
  });

  routes.get("/api/api-tokens", viewer, async (c) => {
    const tokens = await listApiTokens(deps.db, actorOf(c).userId);
    return c.json({ api_tokens: tokens.map(view) });
  });
  routes.post("/api/api-tokens", viewer, async (c) => {
    const body = await readJson(c, NewApiTokenInput);
    const created = await createApiTokenFromInput(deps, auditOf(c), body);
    return c.json({ token: created.token, api_token: view(created.record) }, 201);
  });
  routes.delete("/api/api-tokens/:id", viewer, async (c) => {
    await revokeApiToken(deps, auditOf(c), c.req.param("id"));
    return c.body(null, 204);
  });
  return routes;
}
