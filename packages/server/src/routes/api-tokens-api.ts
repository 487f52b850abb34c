/**
 * @module routes/api-tokens-api
 * Each user's own API tokens as JSON: created and shown once, listed without their secret,
 * revoked. The page is in routes/api-tokens-pages.ts.
 */

import type { Hono } from "hono";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, actorOf, auditOf } from "../auth/actor.js";
import { createApiTokenFromInput, NewApiTokenInput } from "../auth/api-token-input.js";
import { type ApiTokenView, isExpired, listApiTokens, revokeApiToken } from "../auth/api-tokens.js";
import { ApiTokenCreated, ApiTokenList } from "../openapi/account-schemas.js";
import { actOnPathId, apiGroup, NO_CONTENT } from "../openapi/api-route.js";

/** A token without its secret; `expired` is judged at `now`. */
const view = (token: ApiTokenView, now: Date) => ({
  id: token.id,
  name: token.name,
  created_at: token.createdAt,
  last_used_at: token.lastUsedAt,
  revoked_at: token.revokedAt,
  expires_at: token.expiresAt,
  expired: isExpired(token, now),
});

export const API_TOKEN_API = apiGroup<AppDeps>({ tag: "API tokens" });

API_TOKEN_API.add({
  id: "listApiTokens",
  method: "get",
  path: "/api/api-tokens",
  summary: "List your API tokens (never their secret)",
  access: "viewer",
  responses: { 200: { description: "The caller's tokens.", schema: ApiTokenList } },
  handler: async (c, _input, deps) => {
    const tokens = await listApiTokens(deps.db, actorOf(c).userId);
    return c.json({ api_tokens: tokens.map((token) => view(token, deps.clock.now())) });
  },
});

API_TOKEN_API.add({
  id: "createApiToken",
  method: "post",
  path: "/api/api-tokens",
  summary: "Make an API token",
  description:
    "It acts with your role. The secret is in this answer only. Made with an API token that expires, it expires no later than that token: no `expires_at`, or a later one, gets that token's expiry (the answer shows it).",
  access: "viewer",
  body: NewApiTokenInput,
  responses: { 201: { description: "The token and its secret.", schema: ApiTokenCreated } },
  handler: async (c, { body }, deps) => {
    const created = await createApiTokenFromInput(deps, auditOf(c), body);
    return c.json({ token: created.token, api_token: view(created.record, deps.clock.now()) }, 201);
  },
});

API_TOKEN_API.add({
  id: "revokeApiToken",
  method: "delete",
  path: "/api/api-tokens/:id",
  summary: "Revoke one of your API tokens",
  access: "viewer",
  responses: NO_CONTENT,
  handler: actOnPathId(revokeApiToken),
});

export function apiTokenApiRoutes(deps: AppDeps): Hono<AppEnv> {
  return API_TOKEN_API.routes(deps);
}
