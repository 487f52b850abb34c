/**
 * @module digest/digest-query
 * The digest preview's query, shared by its JSON (routes/digest-api.ts) and its page
 * (routes/digest-pages.ts): which period a digest covers when it has no previous one to count from.
 */
import { Type } from "typebox";
import { DIGEST_PERIOD_MS, type DigestPeriod } from "../notifications/digest-schedule.js";

export const DigestQuery = Type.Object(
  {
    period: Type.Optional(
      Type.Union([Type.Literal("daily"), Type.Literal("weekly")], { description: "default daily" }),
    ),
  },
  { additionalProperties: false },
);

export function previewPeriod(query: { period?: DigestPeriod | undefined }): {
  period: DigestPeriod;
  periodMs: number;
} {
  const period = query.period ?? "daily";
  return { period, periodMs: DIGEST_PERIOD_MS[period] };
}
