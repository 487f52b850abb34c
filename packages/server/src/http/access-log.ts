/**
 * @module http/access-log
 * One log line per request. Only the path is logged, never the query string, because enrolment
 * and bootstrap links carry one-time tokens in it.
 */
import type { MiddlewareHandler } from "hono";
import type { Logger } from "../log.js";

export function accessLog(log: Logger): MiddlewareHandler {
  return async (c, next) => {
    const started = performance.now();
    await next();
    const ms = Math.round((performance.now() - started) * 10) / 10;
    const line = { method: c.req.method, path: c.req.path, status: c.res.status, ms };
    if (c.res.status >= 500) {
      log.warn(line, "request");
    } else {
      log.debug(line, "request");
    }
  };
}
