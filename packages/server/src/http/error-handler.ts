/**
 * @module http/error-handler
 * The one place a thrown error becomes a response. JSON callers get `{code, message, details?,
 * request_id}`; htmx form posts get the message as the body with HX-Reswap so the page shows a
 * toast instead of swapping an error into the layout. A 500 never echoes its internal message.
 */
import type { Context, ErrorHandler, NotFoundHandler } from "hono";
import { errorBody, isRequestError } from "../errors.js";
import type { Logger } from "../log.js";

function wantsToast(c: Context): boolean {
  return c.req.header("HX-Request") === "true";
}

export function handleError(log: Logger): ErrorHandler {
  return (err, c) => {
    const requestId = c.get("requestId" as never) as string | undefined;
    if (isRequestError(err)) {
      for (const [name, value] of Object.entries(err.headers)) {
        c.header(name, value);
      }
      if (wantsToast(c)) {
        c.header("HX-Reswap", "none");
        c.header(
          "HX-Trigger",
          JSON.stringify({ "fleetback:toast": { level: "error", message: err.message } }),
        );
        return c.text(err.message, err.status);
      }
      return c.json(errorBody(err.code, err.message, { requestId, details: err.details }), err.status);
    }
    log.error({ err, request_id: requestId, path: c.req.path }, "unhandled error");
    const message = "Internal error; the server log has the details under this request id.";
    if (wantsToast(c)) {
      c.header("HX-Reswap", "none");
      return c.text(message, 500);
    }
    return c.json(errorBody("internal", message, { requestId }), 500);
  };
}

export const handleNotFound: NotFoundHandler = (c) => {
  if (c.req.path.startsWith("/api/")) {
    return c.json(errorBody("not_found", `No route for ${c.req.method} ${c.req.path}`), 404);
  }
  return c.text("Not found", 404);
};
