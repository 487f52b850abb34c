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
import { nextBefore } from "../http/next-before.js";
import { renderPage } from "../http/render.js";
import { readQuery } from "../http/validate.js";

/** Past these many characters a detail, and an entry's details, are cut: one never stretches the page. */
export const AUDIT_DETAIL_MAX = 120;
export const AUDIT_DETAILS_MAX = 300;

const cut = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/**
 * An entry's details as "key: value; …" for a reader (the page escapes it); the API gives the
 * same details whole.
 */
export function auditDetailsText(details: unknown): string {
  if (!details || typeof details !== "object") {
    return "";
  }
  const text = Object.entries(details as Record<string, unknown>)
    .map(([key, value]) => {
      const shown = typeof value === "string" ? value : JSON.stringify(value);
      return `${key.replaceAll("_", " ")}: ${cut(shown, AUDIT_DETAIL_MAX)}`;
    })
    .join("; ");
  return cut(text, AUDIT_DETAILS_MAX);
}

export function auditPageRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const admin = requireRole("admin");
  routes.get("/audit", admin, async (c) => {
    const query = readQuery(c, AuditQuery);
    const entries = await listAudit(deps.db, { limit: 100, before: query.before });
    return renderPage(c, deps.views, "pages/audit.njk", {
      title: "Audit log",
      entries: entries.map((entry) => ({ ...entry, detailsText: auditDetailsText(entry.details) })),
      nextBefore: nextBefore(entries, 100),
    });
  });
  return routes;
}
