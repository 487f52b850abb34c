/**
 * @module auth/authenticate
 * Establishes the actor of every request: a personal API token (Authorization: Bearer fbu_…) or
 * the session cookie. Session requests that change state must prove they come from our pages:
 * forms carry the session's CSRF token, JSON calls need Content-Type application/json and an
 * Origin equal to the base URL. API-token calls need neither (no ambient browser credential).
 * With password sign-in turned off (FLEETBACK_LOCAL_LOGIN=off, in force once an SSO admin exists)
 * a session a password started is ended at its next request: turning passwords off must not
 * leave the ones already signed in that way in for up to 7 days.
 */

import { constantTimeEqual } from "@fleetback/crypto";
import type { Database } from "@fleetback/db";
import type { Context, MiddlewareHandler } from "hono";
import { getCookie } from "hono/cookie";
import type { Clock } from "../clock.js";
import { RequestError } from "../errors.js";
import type { Actor, AppEnv } from "./actor.js";
import { resolveApiToken } from "./api-tokens.js";
import { deleteSession, type ResolvedSession, resolveSession, SESSION_COOKIE } from "./sessions.js";
import { hasSsoAdmin } from "./sso-users.js";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** Agent-facing paths authenticate with agent tokens of their own. */
function isAgentPath(path: string): boolean {
  return path.startsWith("/api/agents/") || path.startsWith("/install/");
}

async function csrfTokenOf(c: Context): Promise<string | undefined> {
  const header = c.req.header("X-CSRF-Token");
  if (header) {
    return header;
  }
  const type = c.req.header("Content-Type") ?? "";
  if (type.startsWith("application/x-www-form-urlencoded") || type.startsWith("multipart/form-data")) {
    const form = await c.req.parseBody({ all: true });
    const field = form._csrf;
    return typeof field === "string" ? field : undefined;
  }
  return undefined;
}

async function checkSessionRequest(c: Context, actor: Actor, baseOrigin: string): Promise<void> {
  const type = c.req.header("Content-Type") ?? "";
  if (type.startsWith("application/json")) {
    if (c.req.header("Origin") !== baseOrigin) {
      throw new RequestError(
        "forbidden",
        "Origin: a JSON call with a session cookie must come from this server's pages",
      );
    }
    return;
  }
  const token = await csrfTokenOf(c);
  if (!token || !actor.csrfToken || !constantTimeEqual(token, actor.csrfToken)) {
    throw new RequestError("forbidden", "The form has expired; reload the page and try again.");
  }
}

interface AuthenticateDeps {
  db: Database;
  clock: Clock;
  config: { baseUrl: string; localLogin: boolean };
}

async function liveSession(deps: AuthenticateDeps, token: string): Promise<ResolvedSession | undefined> {
  const session = await resolveSession(deps.db, deps.clock, token);
  if (
    session &&
    session.user.ssoSubject === null &&
    !deps.config.localLogin &&
    (await hasSsoAdmin(deps.db))
  ) {
    await deleteSession(deps.db, session.sessionId);
    return undefined;
  }
  return session;
}

export function authenticate(deps: AuthenticateDeps): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    // Read per request: the base URL is final only once the server listens (port 0).
    const baseOrigin = new URL(deps.config.baseUrl).origin;
    c.set("actor", undefined);
    if (isAgentPath(c.req.path)) {
      await next();
      return;
    }
    const unsafe = !SAFE_METHODS.has(c.req.method);
    const origin = c.req.header("Origin");
    // "null" is what sandboxed frames and opaque origins send: a login posted from one would sign
    // the victim into the attacker's account. Only a request with no Origin at all (scripts,
    // curl) goes on to the token or CSRF checks below.
    if (unsafe && origin !== undefined && origin !== baseOrigin) {
      throw new RequestError("forbidden", "Origin: requests from other sites are refused");
    }
    const authorization = c.req.header("Authorization");
    if (authorization?.startsWith("Bearer ")) {
      const resolved = await resolveApiToken(
        deps.db,
        deps.clock,
        authorization.slice("Bearer ".length).trim(),
      );
      if (!resolved) {
        throw new RequestError("unauthorised", "The API token is unknown, revoked or expired.");
      }
      const { user, expiresAt } = resolved;
      c.set("actor", {
        userId: user.id,
        username: user.username,
        role: user.role,
        via: "api_token",
        ...(expiresAt ? { credentialExpiresAt: expiresAt } : {}),
      });
      await next();
      return;
    }
    const cookie = getCookie(c, SESSION_COOKIE);
    if (cookie) {
      const session = await liveSession(deps, cookie);
      if (session) {
        const actor: Actor = {
          userId: session.user.id,
          username: session.user.username,
          role: session.user.role,
          via: "session",
          sessionId: session.sessionId,
          csrfToken: session.csrfToken,
        };
        if (unsafe) {
          await checkSessionRequest(c, actor, baseOrigin);
        }
        c.set("actor", actor);
      }
    }
    await next();
  };
}
