/**
 * @module app
 * Builds the Hono application from explicit dependencies. Nothing here opens a socket or reads
 * the environment: main.ts (production) and tests (real port or app.request) decide that.
 */
import { Hono } from "hono";
import { requestId } from "hono/request-id";
import { secureHeaders } from "hono/secure-headers";
import type { AppEnv } from "./auth/actor.js";
import { authenticate } from "./auth/authenticate.js";
import type { BootstrapState } from "./auth/bootstrap.js";
import { createRateLimiter } from "./auth/rate-limit.js";
import type { ServerDeps } from "./deps.js";
import { accessLog } from "./http/access-log.js";
import { clientAddress } from "./http/client-address.js";
import { handleError, handleNotFound } from "./http/error-handler.js";
import { requestLimits } from "./http/request-limits.js";
import type { TreeListingOptions } from "./restore/tree-listing.js";
import { agentUpdateRoutes } from "./routes/agent-updates.js";
import { agentVersionRoutes } from "./routes/agent-versions.js";
import { alertRoutes } from "./routes/alerts.js";
import { apiTokenRoutes } from "./routes/api-tokens.js";
import { auditRoutes } from "./routes/audit.js";
import { authApiRoutes } from "./routes/auth-api.js";
import { authPageRoutes } from "./routes/auth-pages.js";
import { diffRoutes } from "./routes/diff.js";
import { docsRoutes } from "./routes/docs.js";
import { enrolmentRoutes } from "./routes/enrolment.js";
import { fleetRoutes } from "./routes/fleet.js";
import { healthRoutes, type Readiness } from "./routes/health.js";
import { hostRoutes } from "./routes/hosts.js";
import { installRoutes } from "./routes/install.js";
import { jobPageRoutes } from "./routes/job-pages.js";
import { jobRoutes } from "./routes/jobs.js";
import { maintenanceRoutes } from "./routes/maintenance.js";
import { notificationChannelRoutes } from "./routes/notification-channels.js";
import { restoreRoutes } from "./routes/restore.js";
import { scheduleRoutes } from "./routes/schedules.js";
import { snapshotRoutes } from "./routes/snapshots.js";
import { sourceGroupRoutes } from "./routes/source-groups.js";
import { staticRoutes } from "./routes/static.js";
import { userRoutes } from "./routes/users.js";

export interface AppDeps extends ServerDeps {
  readiness: Readiness;
  bootstrap: BootstrapState;
  /** Tree browsing of the restore wizard (timeouts and cache bounds; tests shorten them). */
  treeListing?: TreeListingOptions;
}

export type { AppEnv };

export function createApp(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use(requestId({ headerName: "X-Request-Id" }));
  app.use(clientAddress(deps.config.trustedProxies));
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
  // Before authentication, which may read a form body for its CSRF token.
  app.use(requestLimits());
  app.route("/", healthRoutes(deps.readiness));
  app.route("/", staticRoutes(deps.views.assets));
  app.use(authenticate(deps));
  const loginLimiters = {
    byIp: createRateLimiter({ limit: 30, windowMs: 5 * 60_000, clock: deps.clock }),
    byUserAndIp: createRateLimiter({ limit: 10, windowMs: 5 * 60_000, clock: deps.clock }),
  };
  app.route("/", authApiRoutes(deps, loginLimiters));
  app.route("/", authPageRoutes(deps, loginLimiters));
  // Public: linked from the agent's log, where the reader may have no session.
  app.route("/", docsRoutes(deps));
  app.route("/", fleetRoutes(deps));
  app.route("/", userRoutes(deps));
  app.route("/", apiTokenRoutes(deps));
  app.route("/", auditRoutes(deps));
  app.route("/", notificationChannelRoutes(deps));
  app.route("/", enrolmentRoutes(deps));
  app.route("/", hostRoutes(deps));
  app.route("/", installRoutes(deps));
  app.route("/", agentVersionRoutes(deps));
  app.route("/", agentUpdateRoutes(deps));
  app.route("/", jobRoutes(deps));
  app.route("/", sourceGroupRoutes(deps));
  app.route("/", scheduleRoutes(deps));
  app.route("/", jobPageRoutes(deps));
  app.route("/", maintenanceRoutes(deps));
  app.route("/", alertRoutes(deps));
  app.route("/", snapshotRoutes(deps));
  app.route("/", restoreRoutes(deps));
  app.route("/", diffRoutes(deps));
  app.notFound(handleNotFound);
  app.onError(handleError(deps.log));
  return app;
}
