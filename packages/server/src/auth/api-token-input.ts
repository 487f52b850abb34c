/**
 * @module auth/api-token-input
 * A new API token as its user asks for one, from the tokens page or the JSON API alike: a name
 * and an optional expiry, read against the clock before the token is minted. A token minted with
 * an expiring API token expires no later than it: asking for "never" or for later gets its expiry.
 */
import { Type } from "typebox";
import type { AuditContext } from "../audit/audit.js";
import type { ServerDeps } from "../deps.js";
import { capAtCredentialExpiry } from "../http/app-env.js";
import { createApiToken, parseExpiry } from "./api-tokens.js";

export const NewApiTokenInput = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    /** Optional: a date (end of that day, UTC) or an ISO 8601 date-time with a zone. */
    expires_at: Type.Optional(Type.String({ maxLength: 40 })),
  },
  { additionalProperties: false },
);

export async function createApiTokenFromInput(
  deps: Pick<ServerDeps, "db" | "clock" | "ids">,
  audit: AuditContext,
  fields: { name: string; expires_at?: string },
) {
  const wanted = parseExpiry(fields.expires_at, deps.clock.now());
  return createApiToken(deps, audit, fields.name, capAtCredentialExpiry(audit.actor, wanted));
}
