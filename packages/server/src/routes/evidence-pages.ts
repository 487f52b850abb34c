/**
 * @module routes/evidence-pages
 * The audit evidence report in the browser (issue 39.2): a GET form (range, selector, groups),
 * the report with its gaps, a CSV link and a printable view without the menu. A bad query is
 * said at its input and the report is not drawn. The JSON and CSV are in routes/evidence-api.ts.
 */
import { type Context, Hono } from "hono";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, requireRole } from "../auth/actor.js";
import { EvidenceQueryParams, evidenceQueryOf } from "../evidence/evidence-query.js";
import { EVIDENCE_KEEP_DAYS } from "../evidence/evidence-record.js";
import { type EvidenceReport, evidenceReport } from "../evidence/evidence-report.js";
import { formErrorsOrThrow } from "../http/form-errors.js";
import { renderPage } from "../http/render.js";
import { readQuery, sentQuery } from "../http/validate.js";

/** Past this many marks the page leaves the day-by-day strips to the CSV. */
export const EVIDENCE_PAGE_MAX_MARKS = 20_000;

function marksOf(report: EvidenceReport): number {
  return report.hosts.reduce((sum, host) => sum + (host.groups.length + 2) * report.days.length, 0);
}

export function evidencePageRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const viewer = requireRole("viewer");

  async function build(c: Context<AppEnv>) {
    const raw = sentQuery(c, EvidenceQueryParams);
    const form = { from: "", to: "", selector: "", groups: "", ...raw };
    try {
      const params = readQuery(c, EvidenceQueryParams);
      const query = evidenceQueryOf(params, deps.clock.now());
      const evidence = await evidenceReport(deps.db, query);
      const queryString = new URLSearchParams({
        from: query.from,
        to: query.to,
        ...(params.selector ? { selector: params.selector } : {}),
        ...(params.groups ? { groups: params.groups } : {}),
      }).toString();
      return {
        ok: true as const,
        context: {
          form: { ...form, from: query.from, to: query.to },
          evidence,
          queryString,
          showStrips: marksOf(evidence) <= EVIDENCE_PAGE_MAX_MARKS,
        },
      };
    } catch (err) {
      return { ok: false as const, context: { form, errors: formErrorsOrThrow(err) } };
    }
  }

  routes.get("/reports/evidence", viewer, async (c) => {
    const built = await build(c);
    return renderPage(
      c,
      deps.views,
      "pages/evidence.njk",
      { title: "Evidence", keepDays: EVIDENCE_KEEP_DAYS, ...built.context },
      built.ok ? 200 : 400,
    );
  });
  routes.get("/reports/evidence/print", viewer, async (c) => {
    const built = await build(c);
    if (!built.ok) {
      return renderPage(
        c,
        deps.views,
        "pages/evidence.njk",
        { title: "Evidence", keepDays: EVIDENCE_KEEP_DAYS, ...built.context },
        400,
      );
    }
    return renderPage(c, deps.views, "pages/evidence-print.njk", {
      title: "Evidence",
      generatedAt: deps.clock.now().toISOString(),
      ...built.context,
    });
  });
  return routes;
}
