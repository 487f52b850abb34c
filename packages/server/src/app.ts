/**
 * @module app
 * Builds the Hono application from explicit dependencies. Nothing here opens a socket or reads
 * the environment: main.ts (production) and tests (real port or app.request) decide that.
 */
import { Hono } from "hono";
import { requestId } from "hono/request-id";
import { secureHeaders } from "hono/secure-headers";
import type { AppEnv } from "./auth/actor.js";
import type { ServerDeps } from "./deps.js";
import { accessLog } from "./http/access-log.js";
import { handleError, handleNotFound } from "./http/error-handler.js";
import { healthRoutes, type Readiness } from "./routes/health.js";

export interface AppDeps extends ServerDeps {
  readiness: Readiness;
}

export type { AppEnv };

export function createApp(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use(requestId({ headerName: "X-Request-Id" }));
  app.use(accessLog(deps.log));
  app.use(
    secureHeaders({
      contentSecurityPolicy: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", "data:"],
        connectSrc: ["'self'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
        objectSrc: ["'none'"],
      },
      xFrameOptions: "DENY",
      referrerPolicy: "same-origin",
    }),
  );
  app.route("/", healthRoutes(deps.readiness));
  app.notFound(handleNotFound);
  app.onError(handleError(deps.log));
  return app;
}
