/**
 * @module auth/actor
 * The one middleware that says whether the caller may. Who the caller is (Actor), the request's
 * variables (AppEnv) and the order of roles are in http/app-env.ts, so the transport layer can
 * carry them; they are re-exported here because every route reads them beside requireRole.
 */
import type { Context, MiddlewareHandler } from "hono";
import type { AuditContext } from "../audit/audit.js";
import { RequestError } from "../errors.js";
import { type Actor, type AppEnv, hasRole, type Role } from "../http/app-env.js";
import { clientIp } from "../http/client-address.js";

export type { Actor, AppEnv, Role } from "../http/app-env.js";
export { hasRole } from "../http/app-env.js";

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

/** Who changes something and from where, as the domain writes it into the audit log. */
export function auditOf(c: Context<AppEnv>): AuditContext {
  return { actor: actorOf(c), ip: clientIp(c) };
}
