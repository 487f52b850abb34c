/**
 * @module evidence/evidence-query
 * The evidence report's query, shared by its page, its JSON and its CSV: a range of UTC days, a
 * label selector and group names. Without a range, the last 30 days up to today.
 */
import { type Static, Type } from "typebox";
import { utcDay } from "../clock.js";
import { selectorFromRequest } from "../labels/selector.js";
import type { EvidenceQuery } from "./evidence-report.js";

const Day = Type.String({ pattern: "^\\d{4}-\\d{2}-\\d{2}$", description: "a UTC day, YYYY-MM-DD" });

export const EvidenceQueryParams = Type.Object(
  {
    from: Type.Optional(Day),
    to: Type.Optional(Day),
    selector: Type.Optional(
      Type.String({
        maxLength: 4096,
        description: "a label selector (`env=prod,!staging`); empty: every host",
      }),
    ),
    groups: Type.Optional(
      Type.String({ maxLength: 2048, description: "group names, comma-separated; empty: every group" }),
    ),
  },
  { additionalProperties: false },
);
export type EvidenceQueryParams = Static<typeof EvidenceQueryParams>;

export const DEFAULT_EVIDENCE_DAYS = 30;

export function evidenceQueryOf(params: EvidenceQueryParams, now: Date): EvidenceQuery {
  const to = params.to || utcDay(now);
  const from =
    params.from ||
    utcDay(new Date(new Date(`${to}T00:00:00Z`).getTime() - (DEFAULT_EVIDENCE_DAYS - 1) * 86_400_000));
  const groups = (params.groups ?? "")
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name.length > 0);
  return {
    from,
    to,
    selector: selectorFromRequest(params.selector ?? "", "selector"),
    ...(groups.length > 0 ? { groups } : {}),
  };
}

/** The CSV's file name: what and when it covers. */
export function evidenceFileName(query: EvidenceQuery): string {
  return `fleetback-evidence-${query.from}-to-${query.to}.csv`;
}
