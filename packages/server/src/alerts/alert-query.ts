/**
 * @module alerts/alert-query
 * The alert list's query string and page size, one for the Alerts page and GET /api/alerts so
 * both filter and page the same way.
 */
import { Type } from "typebox";

export const ALERTS_PAGE = 100;

const Ulid = Type.String({ pattern: "^[0-9A-HJKMNP-TV-Z]{26}$" });
export const AlertsQuery = Type.Object(
  {
    state: Type.Optional(Type.Union([Type.Literal("open"), Type.Literal("resolved"), Type.Literal("all")])),
    host_id: Type.Optional(Ulid),
    before: Type.Optional(Ulid),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 999 })),
  },
  { additionalProperties: false },
);
