/**
 * @module http/error-handler
 * The one place a thrown error becomes a response. Three kinds of caller, three answers:
 * - a person's browser opening a page (no htmx, Accept names text/html, not under /api/) gets an
 *   HTML error page in the site's layout: status, message, the request id of a 500, a way home;
 *   but a plain form refused for one of its fields gets its own page back, marked at that field
 *   (http/refused-form);
 * - an htmx request gets no body to swap, only HX-Reswap: none and an HX-Trigger
 *   `fleetback:toast` event, which app.js shows at the form's fields when the error names them
 *   (its `fields`), else as the one toast of the failure;
 * - everyone else (API clients, agents, the WebSocket re-authorisation, curl) gets JSON
 *   `{code, message, details?, request_id}`.
 * A 500 never echoes its internal message.
 */
import type { Views } from "@fleetback/web";
import type { Context, ErrorHandler, NotFoundHandler } from "hono";
import { type ErrorStatus, errorBody, isRequestError } from "../errors.js";
import type { Logger } from "../log.js";
import type { AppEnv } from "./app-env.js";
import { fieldProblemsOf } from "./form-errors.js";
import { type Rerender, refusedFormPage } from "./refused-form.js";
import { renderPage } from "./render.js";
import type { FieldProblem } from "./validate.js";

const INTERNAL_MESSAGE = "Internal error; the server log has the details under this request id.";

const TITLES: Partial<Record<ErrorStatus, string>> = {
  400: "Bad request",
  401: "Sign in first",
  403: "Forbidden",
  404: "Not found",
  409: "Conflict",
  410: "Gone",
  413: "Too large",
  429: "Too many requests",
  500: "Internal error",
  502: "The agent failed",
  503: "Unavailable",
  504: "Timed out",
};

function wantsToast(c: Context): boolean {
  return c.req.header("HX-Request") === "true";
}

/** A browser navigating to a page or posting a plain form, as opposed to a script or an agent. */
function wantsPage(c: Context): boolean {
  if (c.req.path.startsWith("/api/") || c.req.path.startsWith("/install/") || wantsToast(c)) {
    return false;
  }
  if (c.req.header("Upgrade") !== undefined) {
    return false;
  }
  return (c.req.header("Accept") ?? "").includes("text/html");
}

function toast(c: Context, message: string, status: ErrorStatus, fields: FieldProblem[] = []): Response {
  c.header("HX-Reswap", "none");
  const detail = fields.length > 0 ? { level: "error", message, fields } : { level: "error", message };
  c.header("HX-Trigger", JSON.stringify({ "fleetback:toast": detail }));
  // The text is for a caller that does not read the trigger; app.js shows the trigger's toast only.
  return c.text(message, status);
}

function errorPage(
  c: Context,
  views: Views,
  status: ErrorStatus,
  message: string,
  requestId: string | undefined,
): Response {
  const title = TITLES[status] ?? `Error ${status}`;
  return renderPage(
    c as Context<AppEnv>,
    views,
    "pages/error.njk",
    {
      title,
      status,
      message,
      requestId: status >= 500 ? requestId : undefined,
      // A failed single sign-on starts again from the sign-in page, not back at its callback.
      signIn:
        status !== 401
          ? undefined
          : c.req.path.startsWith("/auth/")
            ? "/login"
            : `/login?next=${encodeURIComponent(c.req.path)}`,
    },
    status,
  );
}

export function handleError(log: Logger, views?: Views, rerender?: Rerender): ErrorHandler {
  return async (err, c) => {
    const requestId = c.get("requestId" as never) as string | undefined;
    if (isRequestError(err)) {
      for (const [name, value] of Object.entries(err.headers)) {
        c.header(name, value);
      }
      if (wantsToast(c)) {
        return toast(c, err.message, err.status, fieldProblemsOf(err));
      }
      if (views && wantsPage(c)) {
        const refused = rerender && (await refusedFormPage(c, err.status, fieldProblemsOf(err), rerender));
        return refused || errorPage(c, views, err.status, err.message, requestId);
      }
      return c.json(errorBody(err.code, err.message, { requestId, details: err.details }), err.status);
    }
    log.error({ err, request_id: requestId, path: c.req.path }, "unhandled error");
    if (wantsToast(c)) {
      return toast(c, `${INTERNAL_MESSAGE} (${requestId ?? "no request id"})`, 500);
    }
    if (views && wantsPage(c)) {
      try {
        return errorPage(c, views, 500, INTERNAL_MESSAGE, requestId);
      } catch (renderErr) {
        log.error({ err: renderErr, request_id: requestId }, "the error page failed to render");
      }
    }
    return c.json(errorBody("internal", INTERNAL_MESSAGE, { requestId }), 500);
  };
}

/** No route matched: JSON under /api/, an HTML page for a browser, plain text otherwise. */
export function notFoundHandler(views?: Views): NotFoundHandler {
  return (c) => {
    if (c.req.path.startsWith("/api/")) {
      return c.json(errorBody("not_found", `No route for ${c.req.method} ${c.req.path}`), 404);
    }
    if (views && wantsPage(c)) {
      return errorPage(c, views, 404, `There is no page at ${c.req.path}.`, undefined);
    }
    return c.text("Not found", 404);
  };
}

/** The answer without views (metrics, tests of the JSON contract). */
export const handleNotFound: NotFoundHandler = notFoundHandler();
