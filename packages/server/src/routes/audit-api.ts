/**
 * @module routes/audit-api
 * The audit trail for admins as JSON, paged by id. The page is in routes/audit-pages.ts.
 */

import type { Hono } from "hono";
import type { AppDeps } from "../app-deps.js";
import { listAudit } from "../audit/audit.js";
import { AuditQuery } from "../audit/audit-query.js";
import type { AppEnv } from "../auth/actor.js";
import { nextBefore } from "../http/next-before.js";
import { AuditPage } from "../openapi/account-schemas.js";
import { apiGroup } from "../openapi/api-route.js";

export const AUDIT_API = apiGroup<AppDeps>({ tag: "Audit" });

AUDIT_API.add({
  id: "listAudit",
  method: "get",
  path: "/api/audit",
  summary: "The audit trail, newest first",
  access: "admin",
  query: AuditQuery,
  responses: { 200: { description: "A page of entries.", schema: AuditPage } },
  handler: async (c, { query }, deps) => {
    const limit = Math.min(Number(query.limit ?? 100), 500);
    const entries = await listAudit(deps.db, { limit, before: query.before, action: query.action });
    return c.json({
      entries: entries.map((entry) => ({
        id: entry.id,
        at: entry.at,
        actor_kind: entry.actorKind,
        actor_user_id: entry.actorUserId,
        username: entry.username,
        actor_sso: entry.actorSso,
        action: entry.action,
        target_kind: entry.targetKind,
        target_id: entry.targetId,
        target_name: entry.targetName,
        target_sso: entry.targetSso,
        details: entry.details,
        ip: entry.ip,
      })),
      next_before: nextBefore(entries, limit),
    });
  },
});

export function auditApiRoutes(deps: AppDeps): Hono<AppEnv> {
  return AUDIT_API.routes(deps);
}
