/**
 * @module auth/actor
 * Who is calling, and the one middleware that says whether they may. Roles are ordered: an
 * admin may do all an operator may, an operator all a viewer may.
 */
import type { UserRole } from "@fleetback/db";
import type { Context, MiddlewareHandler } from "hono";
import { RequestError } from "../errors.js";

export type Role = UserRole;

export interface Actor {
  userId: string;
  username: string;
  role: Role;
  /** How the caller proved who they are; CSRF applies to sessions only. */
  via: "session" | "api_token";
  sessionId?: string;
  /** The session's CSRF token, embedded in every form the session renders. */
  csrfToken?: string;
}

export type AppEnv = {
  Variables: { requestId: string; actor: Actor | undefined; clientIp: string | undefined };
};

const RANK: Record<Role, number> = { viewer: 1, operator: 2, admin: 3 };

export function hasRole(actor: Actor | undefined, role: Role): boolean {
  return actor !== undefined && RANK[actor.role] >= RANK[role];
}

/** Marks a handler as needing `role`; the route-role test reads this marker from the route table. */
export type RoleMiddleware = MiddlewareHandler<AppEnv> & { requiredRole: Role };

export function requireRole(role: Role): RoleMiddleware {
  const middleware: MiddlewareHandler<AppEnv> = async (c, next) => {
    const actor = c.get("actor");
    if (!actor) {
      // A person opening a page is sent to sign in and brought back; API callers get 401.
      if (c.req.method === "GET" && !c.req.path.startsWith("/api/")) {
        return c.redirect(`/login?next=${encodeURIComponent(c.req.path)}`, 303);
      }
      throw new RequestError("unauthorised", "Sign in first.");
    }
    if (!hasRole(actor, role)) {
      throw new RequestError("forbidden", `This needs the ${role} role; you are ${actor.role}.`);
    }
    await next();
    return undefined;
  };
  return Object.assign(middleware, { requiredRole: role });
}

/** The caller of a route behind requireRole; a route without one that calls this answers 401. */
export function actorOf(c: Context<AppEnv>): Actor {
  const actor = c.get("actor");
  if (!actor) {
    throw new RequestError("unauthorised", "Sign in first.");
  }
  return actor;
}
