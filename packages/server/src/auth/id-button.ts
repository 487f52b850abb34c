/**
 * @module auth/id-button
 * A page's one-click form (delete, revoke, reject, resolve): a post with no field but its CSRF
 * token, that does one audited thing to the `:id` of its path and goes back to a page, as
 * redirectAfterPost does for htmx and plain forms alike. The JSON twin is actOnPathId.
 */
import type { Context } from "hono";
import type { AppDeps } from "../app-deps.js";
import type { AuditContext } from "../audit/audit.js";
import { redirectAfterPost } from "../http/render.js";
import { EmptyForm, readForm } from "../http/validate.js";
import { type AppEnv, auditOf } from "./actor.js";

/** The route handler of such a button; `back` is where to, fixed or made from the id. */
export function idButton(
  deps: AppDeps,
  act: (deps: AppDeps, audit: AuditContext, id: string) => Promise<unknown>,
  back: string | ((id: string) => string),
) {
  return async (c: Context<AppEnv, `${string}/:id${string}`>): Promise<Response> => {
    await readForm(c, EmptyForm);
    const id = c.req.param("id");
    await act(deps, auditOf(c), id);
    return redirectAfterPost(c, typeof back === "string" ? back : back(id));
  };
}
