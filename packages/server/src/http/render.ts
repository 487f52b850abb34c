/**
 * @module http/render
 * Renders a page with what every page needs: the actor for the navigation, the session's CSRF
 * token for forms, and the title.
 */
import type { Views } from "@fleetback/web";
import type { Context } from "hono";
import type { ErrorStatus } from "../errors.js";
import { type AppEnv, hasRole } from "./app-env.js";

export function renderPage(
  c: Context<AppEnv>,
  views: Views,
  template: string,
  context: Record<string, unknown> = {},
  status: 200 | ErrorStatus = 200,
) {
  const actor = c.get("actor");
  const html = views.render(template, {
    ...context,
    actor,
    csrfToken: actor?.csrfToken,
    isAdmin: hasRole(actor, "admin"),
    isOperator: hasRole(actor, "operator"),
    path: c.req.path,
  });
  return c.html(html, status);
}

/** After a successful form post: htmx follows HX-Redirect, a plain form follows 303. */
export function redirectAfterPost(c: Context<AppEnv>, location: string) {
  if (c.req.header("HX-Request") === "true") {
    c.header("HX-Redirect", location);
    return c.body(null, 204);
  }
  return c.redirect(location, 303);
}

// Kept here so the routes keep one import; the trusted-proxy logic lives in http/client-address.
export { clientIp } from "./client-address.js";
