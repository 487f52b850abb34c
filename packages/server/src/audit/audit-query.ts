/**
 * @module audit/audit-query
 * How a caller pages the audit trail, the same from the page and the JSON API: before an entry
 * id, optionally of one action, at most a given number.
 */
import { Type } from "typebox";

export const AuditQuery = Type.Object(
  {
    before: Type.Optional(Type.String({ pattern: "^[0-9A-HJKMNP-TV-Z]{26}$" })),
    action: Type.Optional(Type.String({ maxLength: 64 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 999 })),
  },
  { additionalProperties: false },
);
