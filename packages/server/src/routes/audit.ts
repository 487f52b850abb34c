/**
 * @module routes/audit
 * The audit trail for admins, as JSON (paged by id) and as a page.
 */
import { Hono } from "hono";
import { Type } from "typebox";
import type { AppDeps } from "../app.js";
import { listAudit } from "../audit/audit.js";
import { type AppEnv, requireRole } from "../auth/actor.js";
import { renderPage } from "../http/render.js";
import { readQuery } from "../http/validate.js";

const AuditQuery = Type.Object(
  {
    before: Type.Optional(Type.String({ pattern: "^[0-9A-HJKMNP-TV-Z]{26}$" })),
    action: Type.Optional(Type.String({ maxLength: 64 })),
    limit: Type.Optional(Type.String({ pattern: "^[1-9][0-9]{0,2}$" })),
  },
  { additionalProperties: false },
);

export function auditRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const admin = requireRole("admin");
  routes.get("/api/audit", admin, async (c) => {
    const query = readQuery(c, AuditQuery);
    const limit = Math.min(Number(query.limit ?? 100), 500);
    const entries = await listAudit(deps.db, { limit, before: query.before, action: query.action });
    return c.json({
      entries: entries.map((entry) => ({
        id: entry.id,
        at: entry.at,
        actor_kind: entry.actorKind,
        actor_user_id: entry.actorUserId,
        username: entry.username,
        action: entry.action,
        target_kind: entry.targetKind,
        target_id: entry.targetId,
        details: entry.details,
        ip: entry.ip,
      })),
      next_before: entries.length === limit ? entries.at(-1)?.id : undefined,
    });
  });
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
