/**
 * @module routes/audit-pages
 * The audit trail for admins as a page, 100 entries at a time. The JSON twin is in
 * routes/audit-api.ts.
 */
import { Hono } from "hono";
import type { AppDeps } from "../app-deps.js";
import { listAudit } from "../audit/audit.js";
import { AuditQuery } from "../audit/audit-query.js";
import { type AppEnv, requireRole } from "../auth/actor.js";
import { renderPage } from "../http/render.js";
import { readQuery } from "../http/validate.js";

export function auditPageRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const admin = requireRole("admin");
  routes.get("/audit", admin, async (c) => {
    const query = readQuery(c, AuditQuery);
    const entries = await listAudit(deps.db, { limit: 100, before: query.before });
    return renderPage(c, deps.views, "pages/audit.njk", {
      title: "Audit log",
      entries,
      nextBefore: entries.length === 100 ? entries.at(-1)?.id : undefined,
    });
  });
  return routes;
}
