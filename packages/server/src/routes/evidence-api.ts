/**
 * @module routes/evidence-api
 * The audit evidence report over HTTP (issue 39.2): as JSON, and as CSV for a spreadsheet or an
 * auditor's archive. Viewers may read it: it says no more than the host pages do. The page is in
 * routes/evidence-pages.ts.
 */
import type { Hono } from "hono";
import { Type } from "typebox";
import type { AppDeps } from "../app-deps.js";
import type { AppEnv } from "../auth/actor.js";
import { EvidenceQueryParams, evidenceFileName, evidenceQueryOf } from "../evidence/evidence-query.js";
import {
  EVIDENCE_MAX_DAYS,
  EVIDENCE_MAX_HOSTS,
  evidenceCsv,
  evidenceReport,
} from "../evidence/evidence-report.js";
import { apiGroup } from "../openapi/api-route.js";
import { EvidenceReportJson } from "../openapi/evidence-schemas.js";

const ABOUT = `Per host, group and UTC day: whether a snapshot of the group was made that day (as the server first listed it), how the host's last check and drill by then ended, and the gaps. Built from the history the server records as things happen, so forgetting snapshots or deleting a host does not change it. \`from\` and \`to\` are inclusive (default: the last 30 days), at most ${EVIDENCE_MAX_DAYS} days; the selector may match at most ${EVIDENCE_MAX_HOSTS} hosts.`;

export const EVIDENCE_API = apiGroup<AppDeps>({ tag: "Reports" });

EVIDENCE_API.add({
  id: "getEvidenceReport",
  method: "get",
  path: "/api/reports/evidence",
  summary: "Backup evidence per host and day",
  description: ABOUT,
  access: "viewer",
  query: EvidenceQueryParams,
  responses: { 200: { description: "The report.", schema: EvidenceReportJson } },
  handler: async (c, { query }, deps) =>
    c.json(await evidenceReport(deps.db, evidenceQueryOf(query, deps.clock.now()))),
});

EVIDENCE_API.add({
  id: "getEvidenceCsv",
  method: "get",
  path: "/api/reports/evidence.csv",
  summary: "Backup evidence per host and day, as CSV",
  description: `${ABOUT} One line per host, group and day: day, host, host_id, deleted, group, snapshot (yes, no, not yet), snapshots, last_check and last_drill (passed, failed, none).`,
  access: "viewer",
  query: EvidenceQueryParams,
  responses: {
    200: { description: "The report as CSV.", contentType: "text/csv", schema: Type.String() },
  },
  handler: async (c, { query }, deps) => {
    const evidence = evidenceQueryOf(query, deps.clock.now());
    const report = await evidenceReport(deps.db, evidence);
    return c.body(evidenceCsv(report), 200, {
      "Content-Type": "text/csv; charset=utf-8",
      "Content-Disposition": `attachment; filename="${evidenceFileName(evidence)}"`,
    });
  },
});

export function evidenceApiRoutes(deps: AppDeps): Hono<AppEnv> {
  return EVIDENCE_API.routes(deps);
}
