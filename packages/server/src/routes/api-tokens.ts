/**
 * @module routes/api-tokens
 * Each user's own API tokens: created and shown once, listed without their secret, revoked.
 */
import { Hono } from "hono";
import { Type } from "typebox";
import type { AppDeps } from "../app.js";
import { writeAudit } from "../audit/audit.js";
import { type Actor, type AppEnv, requireRole } from "../auth/actor.js";
import { createApiToken, isExpired, listApiTokens, parseExpiry, revokeApiToken } from "../auth/api-tokens.js";
import { RequestError } from "../errors.js";
import { clientIp, redirectAfterPost, renderPage } from "../http/render.js";
import { readForm, readJson } from "../http/validate.js";

const NewToken = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    /** Optional: a date (end of that day, UTC) or an ISO 8601 date-time with a zone. */
    expires_at: Type.Optional(Type.String({ maxLength: 40 })),
  },
  { additionalProperties: false },
);

function actorOf(actor: Actor | undefined): Actor {
  if (!actor) {
    throw new RequestError("unauthorised", "Sign in first.");
  }
  return actor;
}

export function apiTokenRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const viewer = requireRole("viewer");

  async function create(actor: Actor, fields: { name: string; expires_at?: string }, ip: string | undefined) {
    const expiresAt = parseExpiry(fields.expires_at, deps.clock.now());
    const created = await createApiToken(deps.db, deps.clock, actor.userId, fields.name, expiresAt);
    await writeAudit(deps.db, deps.clock, {
      actor,
      action: "api_token.create",
      targetKind: "api_token",
      targetId: created.record.id,
      ip,
      ...(expiresAt ? { details: { expires_at: expiresAt.toISOString() } } : {}),
    });
    return created;
  }

  async function revoke(actor: Actor, id: string, ip: string | undefined) {
    await revokeApiToken(deps.db, deps.clock, actor.userId, id);
    await writeAudit(deps.db, deps.clock, {
      actor,
      action: "api_token.revoke",
      targetKind: "api_token",
      targetId: id,
      ip,
    });
  }

  const view = (token: Awaited<ReturnType<typeof listApiTokens>>[number]) => ({
    id: token.id,
    name: token.name,
    created_at: token.createdAt,
    last_used_at: token.lastUsedAt,
    revoked_at: token.revokedAt,
    expires_at: token.expiresAt,
    expired: isExpired(token, deps.clock.now()),
  });
  /** The page's rows: the record plus whether it has expired by now. */
  const pageRows = (tokens: Awaited<ReturnType<typeof listApiTokens>>) =>
    tokens.map((token) => ({ ...token, expired: isExpired(token, deps.clock.now()) }));

  routes.get("/api/api-tokens", viewer, async (c) => {
    const tokens = await listApiTokens(deps.db, actorOf(c.get("actor")).userId);
    return c.json({ api_tokens: tokens.map(view) });
  });
  routes.post("/api/api-tokens", viewer, async (c) => {
    const body = await readJson(c, NewToken);
    const created = await create(actorOf(c.get("actor")), body, clientIp(c));
    return c.json({ token: created.token, api_token: view(created.record) }, 201);
  });
  routes.delete("/api/api-tokens/:id", viewer, async (c) => {
    await revoke(actorOf(c.get("actor")), c.req.param("id"), clientIp(c));
    return c.body(null, 204);
  });

  routes.get("/settings/tokens", viewer, async (c) => {
    const tokens = await listApiTokens(deps.db, actorOf(c.get("actor")).userId);
    return renderPage(c, deps.views, "pages/tokens.njk", { title: "API tokens", tokens: pageRows(tokens) });
  });
  routes.post("/settings/tokens", viewer, async (c) => {
    const form = await readForm(c, NewToken);
    const actor = actorOf(c.get("actor"));
    const created = await create(actor, form, clientIp(c));
    // Rendered directly (not redirected) so the secret is shown once and never travels in a URL.
    const tokens = await listApiTokens(deps.db, actor.userId);
    return renderPage(c, deps.views, "pages/tokens.njk", {
      title: "API tokens",
      tokens: pageRows(tokens),
      newToken: created.token,
    });
  });
  routes.post("/settings/tokens/:id/revoke", viewer, async (c) => {
    await revoke(actorOf(c.get("actor")), c.req.param("id"), clientIp(c));
    return redirectAfterPost(c, "/settings/tokens");
  });
  return routes;
}
