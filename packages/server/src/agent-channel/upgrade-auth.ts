/**
 * @module agent-channel/upgrade-auth
 * The bearer check of the agent upgrade, done before the WebSocket exists, as the contract says
 * (packages/protocol/PROTOCOL.md): a missing, unknown or revoked token gets a plain HTTP 401 with
 * the contract's `{"code":"unauthorised","message":"..."}` body. Only the token's SHA-256 is
 * stored, so the lookup is by hash; a revoked host has a null hash and matches nothing.
 */
import { STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import { hashToken } from "@fleetback/crypto";
import { type Database, hosts } from "@fleetback/db";
import { ERROR_CODES } from "@fleetback/protocol";
import { eq } from "drizzle-orm";

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

export const UNAUTHORISED_BODY = {
  code: ERROR_CODES.unauthorised,
  message: "a valid agent bearer token is required",
} as const;

/** Answers an upgrade request with a plain HTTP response and closes the socket. */
export function refuseUpgrade(socket: Duplex, status: number, body: { code: string; message: string }): void {
  if (socket.destroyed) {
    return;
  }
  const text = JSON.stringify(body);
  socket.once("finish", () => socket.destroy());
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ""}\r\n` +
      "Connection: close\r\n" +
      "Content-Type: application/json; charset=utf-8\r\n" +
      `Content-Length: ${Buffer.byteLength(text)}\r\n` +
      "\r\n" +
      text,
  );
}
