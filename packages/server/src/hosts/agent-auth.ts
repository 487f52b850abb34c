/**
 * @module hosts/agent-auth
 * Who an agent is: the host whose token its `Authorization: Bearer` header carries. The agent
 * channel checks it before the upgrade (packages/protocol/PROTOCOL.md) and agent-facing routes on
 * each request; a missing, unknown or revoked token gets the contract's
 * `{"code":"unauthorised","message":"..."}` body. Only the token's SHA-256 is stored, so the
 * lookup is by hash; a revoked host has a null hash and matches nothing.
 */
import { hashToken } from "@fleetback/crypto";
import { type Database, hosts } from "@fleetback/db";
import { ERROR_CODES } from "@fleetback/protocol";
import { eq } from "drizzle-orm";
import { errorBody } from "../errors.js";

export interface AgentIdentity {
  hostId: string;
  tokenHash: string;
}

/** The token of an `Authorization: Bearer <token>` header, if that is what the header holds. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer[ \t]+([^\s]+)[ \t]*$/i.exec(header ?? "");
  return match?.[1];
}

export type AgentAuthResult =
  | { ok: true; identity: AgentIdentity }
  | { ok: false; reason: "missing_token" | "unknown_token" };

export async function authenticateAgent(db: Database, header: string | undefined): Promise<AgentAuthResult> {
  const token = bearerToken(header);
  if (token === undefined) {
    return { ok: false, reason: "missing_token" };
  }
  const tokenHash = hashToken(token);
  const [host] = await db.select({ id: hosts.id }).from(hosts).where(eq(hosts.agentTokenHash, tokenHash));
  return host
    ? { ok: true, identity: { hostId: host.id, tokenHash } }
    : { ok: false, reason: "unknown_token" };
}

export const UNAUTHORISED_BODY = errorBody(
  ERROR_CODES.unauthorised,
  "a valid agent bearer token is required",
);
