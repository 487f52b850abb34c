/**
 * @module app
 * Builds the Hono application from explicit dependencies. Nothing here opens a socket or reads
 * the environment: main.ts (production) and tests (real port or app.request) decide that.
 */
import { Hono } from "hono";
import { requestId } from "hono/request-id";
import { secureHeaders } from "hono/secure-headers";
import { API_OPERATIONS } from "./api-operations.js";
import type { AppDeps } from "./app-deps.js";
import type { AppEnv } from "./auth/actor.js";
import { authenticate } from "./auth/authenticate.js";
import { createRateLimiter } from "./auth/rate-limit.js";
import { accessLog } from "./http/access-log.js";
import { clientAddress } from "./http/client-address.js";
import { handleError, notFoundHandler } from "./http/error-handler.js";
import { requestLimits } from "./http/request-limits.js";
import { openApiRoutes } from "./openapi/openapi-routes.js";
import { createTreeLister } from "./restore/tree-listing.js";
import { agentEnrolmentRoutes } from "./routes/agent-enrolment.js";
import { agentRolloutPageRoutes } from "./routes/agent-rollouts-pages.js";
import { agentUpdateApiRoutes } from "./routes/agent-updates-api.js";
import { agentUpdatePageRoutes } from "./routes/agent-updates-pages.js";
import { agentVersionRoutes } from "./routes/agent-versions.js";
import { alertApiRoutes } from "./routes/alerts-api.js";
import { alertPageRoutes } from "./routes/alerts-pages.js";
import { apiTokenApiRoutes } from "./routes/api-tokens-api.js";
import { apiTokenPageRoutes } from "./routes/api-tokens-pages.js";
import { auditApiRoutes } from "./routes/audit-api.js";
import { auditPageRoutes } from "./routes/audit-pages.js";
import { authApiRoutes } from "./routes/auth-api.js";
import { authPageRoutes } from "./routes/auth-pages.js";
import { dashboardApiRoutes } from "./routes/dashboard-api.js";
import { dashboardPageRoutes } from "./routes/dashboard-pages.js";
import { diffApiRoutes } from "./routes/diff-api.js";
import { diffPageRoutes } from "./routes/diff-pages.js";
import { digestApiRoutes } from "./routes/digest-api.js";
import { digestPageRoutes } from "./routes/digest-pages.js";
import { docsRoutes } from "./routes/docs.js";
import { enrolmentApiRoutes } from "./routes/enrolment-api.js";
import { enrolmentPageRoutes } from "./routes/enrolment-pages.js";
import { evidenceApiRoutes } from "./routes/evidence-api.js";
import { evidencePageRoutes } from "./routes/evidence-pages.js";
import { fleetActionApiRoutes } from "./routes/fleet-actions-api.js";
import { fleetApiRoutes } from "./routes/fleet-api.js";
import { fleetPageRoutes } from "./routes/fleet-pages.js";
import { healthRoutes } from "./routes/health.js";
import { hostApiRoutes } from "./routes/hosts-api.js";
import { hostPageRoutes } from "./routes/hosts-pages.js";
import { installRoutes } from "./routes/install.js";
import { jobPageRoutes } from "./routes/job-pages.js";
import { jobRoutes } from "./routes/jobs.js";
import { labelApiRoutes } from "./routes/labels-api.js";
import { maintenanceApiRoutes } from "./routes/maintenance-api.js";
import { maintenancePageRoutes } from "./routes/maintenance-pages.js";
import { metricsRoutes } from "./routes/metrics.js";
import { mirrorApiRoutes } from "./routes/mirror-api.js";
import { mirrorPageRoutes } from "./routes/mirror-pages.js";
import { notificationChannelApiRoutes } from "./routes/notification-channels-api.js";
import { notificationChannelPageRoutes } from "./routes/notification-channels-pages.js";
import { policyApiRoutes } from "./routes/policies-api.js";
import { policyPageRoutes } from "./routes/policies-pages.js";
import { recoveryKitRoutes } from "./routes/recovery-kit.js";
import { reportScheduleApiRoutes } from "./routes/report-schedules-api.js";
import { restoreApiRoutes } from "./routes/restore-api.js";
import { restorePageRoutes } from "./routes/restore-pages.js";
import { scheduleApiRoutes } from "./routes/schedules-api.js";
import { schedulePageRoutes } from "./routes/schedules-pages.js";
import { searchApiRoutes } from "./routes/search-api.js";
import { searchPageRoutes } from "./routes/search-pages.js";
import { snapshotApiRoutes } from "./routes/snapshots-api.js";
import { snapshotPageRoutes } from "./routes/snapshots-pages.js";
import { sourceGroupApiRoutes } from "./routes/source-groups-api.js";
import { sourceGroupPageRoutes } from "./routes/source-groups-pages.js";
import { ssoPageRoutes } from "./routes/sso-pages.js";
import { staticRoutes } from "./routes/static.js";
import { userApiRoutes } from "./routes/users-api.js";
import { userPageRoutes } from "./routes/users-pages.js";

export type { AppDeps, AppEnv };

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
  // Prometheus has no session: its own token or network, never session auth and CSRF.
  app.route("/", metricsRoutes(deps));
  app.route("/", staticRoutes(deps.views.assets));
  app.use(authenticate(deps));
  const loginLimiters = {
    byIp: createRateLimiter({
      db: deps.db,
      scope: "login-ip",
      limit: 30,
      windowMs: 5 * 60_000,
      clock: deps.clock,
    }),
    byUserAndIp: createRateLimiter({
      db: deps.db,
      scope: "login-user-ip",
      limit: 10,
      windowMs: 5 * 60_000,
      clock: deps.clock,
    }),
  };
  app.route("/", authApiRoutes(deps, loginLimiters));
  app.route("/", authPageRoutes(deps, loginLimiters));
  // Public: linked from the agent's log, where the reader may have no session.
  app.route("/", docsRoutes(deps));
  app.route("/", dashboardPageRoutes(deps));
  app.route("/", dashboardApiRoutes(deps));
  app.route("/", fleetPageRoutes(deps));
  app.route("/", fleetApiRoutes(deps));
  app.route("/", userApiRoutes(deps));
  app.route("/", userPageRoutes(deps));
  app.route("/", apiTokenApiRoutes(deps));
  app.route("/", apiTokenPageRoutes(deps));
  app.route("/", auditApiRoutes(deps));
  app.route("/", auditPageRoutes(deps));
  app.route("/", evidenceApiRoutes(deps));
  app.route("/", digestApiRoutes(deps));
  app.route("/", reportScheduleApiRoutes(deps));
  app.route("/", evidencePageRoutes(deps));
  app.route("/", searchApiRoutes(deps));
  app.route("/", searchPageRoutes(deps));
  app.route("/", digestPageRoutes(deps));
  app.route("/", notificationChannelApiRoutes(deps));
  app.route("/", notificationChannelPageRoutes(deps));
  app.route("/", enrolmentApiRoutes(deps));
  app.route("/", agentEnrolmentRoutes(deps));
  app.route("/", enrolmentPageRoutes(deps));
  app.route("/", labelApiRoutes(deps));
  app.route("/", fleetActionApiRoutes(deps));
  app.route("/", policyApiRoutes(deps));
  app.route("/", policyPageRoutes(deps));
  app.route("/", hostApiRoutes(deps));
  app.route("/", hostPageRoutes(deps));
  app.route("/", recoveryKitRoutes(deps));
  app.route("/", mirrorApiRoutes(deps));
  app.route("/", mirrorPageRoutes(deps));
  app.route("/", installRoutes(deps));
  app.route("/", agentVersionRoutes(deps));
  app.route("/", agentUpdateApiRoutes(deps));
  app.route("/", agentUpdatePageRoutes(deps));
  app.route("/", agentRolloutPageRoutes(deps));
  app.route("/", jobRoutes(deps));
  app.route("/", sourceGroupApiRoutes(deps));
  app.route("/", sourceGroupPageRoutes(deps));
  app.route("/", scheduleApiRoutes(deps));
  app.route("/", schedulePageRoutes(deps));
  app.route("/", jobPageRoutes(deps));
  app.route("/", maintenanceApiRoutes(deps));
  app.route("/", maintenancePageRoutes(deps));
  app.route("/", alertApiRoutes(deps));
  app.route("/", alertPageRoutes(deps));
  app.route("/", snapshotApiRoutes(deps));
  app.route("/", snapshotPageRoutes(deps));
  // One tree cache for the wizard and its JSON twin, as one route module had before.
  const trees = createTreeLister(deps, deps.treeListing);
  app.route("/", restorePageRoutes(deps, trees));
  app.route("/", restoreApiRoutes(deps, trees));
  app.route("/", diffPageRoutes(deps));
  app.route("/", diffApiRoutes(deps));
  app.route("/", openApiRoutes(deps, API_OPERATIONS));
  app.route("/", ssoPageRoutes(deps));
  app.notFound(notFoundHandler(deps.views));
  // A refused plain form is shown on its own page again, which this app renders in-process.
  app.onError(handleError(deps.log, deps.views, (request, env) => app.fetch(request, env as never)));
  return app;
}
