/**
 * @module http/app-env
 * What every request carries (its id, the client's address, the caller) and the order of roles.
 * The transport layer reads them to render pages and resolve addresses; auth/ fills in the actor
 * and decides what a role may do. They live here so http/ needs nothing from auth/.
 */
import type { UserRole } from "@fleetback/db";

export type Role = UserRole;

export interface Actor {
  userId: string;
  username: string;
  role: Role;
  /** How the caller proved who they are; CSRF applies to sessions only. */
  via: "session" | "api_token";
  sessionId?: string;
  /** The session's CSRF token, embedded in every form the session renders. */
  csrfToken?: string;
  /** When the API token the caller presented expires; tokens it mints must not outlive it. */
  credentialExpiresAt?: Date;
}

export type AppEnv = {
  Variables: { requestId: string; actor: Actor | undefined; clientIp: string | undefined };
};

const RANK: Record<Role, number> = { viewer: 1, operator: 2, admin: 3 };

/** Roles are ordered: an admin may do all an operator may, an operator all a viewer may. */
export function hasRole(actor: Actor | undefined, role: Role): boolean {
  return actor !== undefined && RANK[actor.role] >= RANK[role];
}

/**
 * The expiry of a credential minted by `actor`: at most that of the token the actor presented, so
 * a leaked short-lived token cannot mint itself a longer-lived (or never expiring) successor.
 * `wanted` undefined means "never".
 */
export function capAtCredentialExpiry<T extends Date | undefined>(actor: Actor, wanted: T): T | Date {
  const parent = actor.credentialExpiresAt;
  if (parent === undefined) {
    return wanted;
  }
  return wanted === undefined || wanted.getTime() > parent.getTime() ? parent : wanted;
}
