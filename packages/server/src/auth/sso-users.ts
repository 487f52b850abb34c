/**
 * @module auth/sso-users
 * The Fleetback user behind a single sign-on identity. A user is keyed by the provider's issuer
 * and subject, never matched to a local user by name (a provider lets people pick names, and
 * matching would hand them that account). The first sign-in creates the user; with a role claim
 * configured, each sign-in sets the role the mapping gives, so taking someone out of the
 * provider's admin group takes effect at their next sign-in. A user disabled here stays out
 * whatever the provider says. Every sign-in first passes the access rules (auth/sso-access.ts);
 * an identity they refuse, or that gets no role (the default), is turned away and audited.
 */
import { type Database, isUniqueViolation, type User, type UserRole, users } from "@fleetback/db";
import { and, count, eq, isNotNull, isNull, sql } from "drizzle-orm";
import { writeAudit } from "../audit/audit.js";
import { RequestError } from "../errors.js";
import { accessRefusal, readClaim } from "./sso-access.js";
import type { SsoIdentity } from "./sso-client.js";
import type { SsoConfig } from "./sso-config.js";
import { lockActiveAdmins, type UserDeps } from "./users.js";

const RANK: Record<UserRole, number> = { viewer: 0, operator: 1, admin: 2 };

/** The highest role any of the claim's values maps to; else the default (null: none). */
export function roleFromClaims(config: SsoConfig, claims: Record<string, unknown>): UserRole | null {
  if (config.roleClaim !== undefined) {
    const raw = readClaim(claims, config.roleClaim);
    const values = (Array.isArray(raw) ? raw : [raw]).filter((v): v is string => typeof v === "string");
    let best: UserRole | null = null;
    for (const value of values) {
      const role = config.roleMap.get(value);
      if (role !== undefined && (best === null || RANK[role] > RANK[best])) {
        best = role;
      }
    }
    if (best !== null) {
      return best;
    }
  }
  return config.defaultRole;
}

/** A name that fits USERNAME_PATTERN, from the configured claim, else the email, else the subject. */
export function usernameFromClaims(
  config: SsoConfig,
  claims: Record<string, unknown>,
  subject: string,
): string {
  for (const candidate of [readClaim(claims, config.usernameClaim), claims.email, subject]) {
    if (typeof candidate !== "string") {
      continue;
    }
    const cleaned = candidate
      .replace(/[^A-Za-z0-9._@-]/g, "-")
      .replace(/^[^A-Za-z0-9]+/, "")
      .slice(0, 56);
    if (cleaned !== "") {
      return cleaned;
    }
  }
  return "sso-user";
}

async function nameTaken(db: Database, username: string): Promise<boolean> {
  const rows = await db
    .select({ n: count() })
    .from(users)
    .where(sql`lower(${users.username}) = lower(${username})`);
  return (rows[0]?.n ?? 0) > 0;
}

async function freeName(db: Database, base: string): Promise<string> {
  for (let n = 1; n < 100; n++) {
    const name = n === 1 ? base : `${base}-${n}`;
    if (!(await nameTaken(db, name))) {
      return name;
    }
  }
  throw new RequestError("conflict", "Single sign-on failed: no free user name for this identity.");
}

async function findBySubject(db: Database, issuer: string, subject: string): Promise<User | undefined> {
  const rows = await db
    .select()
    .from(users)
    .where(and(eq(users.ssoIssuer, issuer), eq(users.ssoSubject, subject)))
    .limit(1);
  return rows[0];
}

/** True when an enabled admin signs in through the provider (then local sign-in may be off). */
export async function hasSsoAdmin(db: Database): Promise<boolean> {
  const rows = await db
    .select({ n: count() })
    .from(users)
    .where(and(eq(users.role, "admin"), isNull(users.disabledAt), isNotNull(users.ssoSubject)));
  return (rows[0]?.n ?? 0) > 0;
}

/**
 * Refuses a sign-in with a "no access" answer and records it: an admin looking at the audit log
 * sees who the provider sent and why they were turned away (the name is the one the claims
 * would give, the subject the provider's key; neither is a secret).
 */
async function refuse(
  deps: UserDeps,
  config: SsoConfig,
  identity: SsoIdentity,
  meta: { ip?: string | undefined },
  reason: string,
  existing: User | undefined,
): Promise<never> {
  await writeAudit(deps.db, deps, {
    actor: "system",
    ip: meta.ip,
    action: "auth.sso_refused",
    ...(existing ? { targetKind: "user", targetId: existing.id } : {}),
    details: {
      sso: true,
      issuer: identity.issuer,
      subject: identity.subject.slice(0, 256),
      name: usernameFromClaims(config, identity.claims, identity.subject),
      reason,
    },
  });
  throw new RequestError("forbidden", `No access to Fleetback: ${reason}. Ask an admin.`);
}

const NO_ROLE = "your account at the identity provider has no role here";

/** The user for this identity, created or given its mapped role; refuses a disabled or unmapped one. */
export async function ssoUser(
  deps: UserDeps,
  config: SsoConfig,
  identity: SsoIdentity,
  meta: { ip?: string | undefined },
): Promise<User> {
  const role = roleFromClaims(config, identity.claims);
  const existing = await findBySubject(deps.db, identity.issuer, identity.subject);
  const denied = accessRefusal(config.access, identity.claims);
  if (denied !== undefined) {
    return refuse(deps, config, identity, meta, denied, existing);
  }
  if (existing !== undefined) {
    if (existing.disabledAt !== null) {
      return refuse(deps, config, identity, meta, "this user is disabled in Fleetback", existing);
    }
    if (config.roleClaim === undefined || role === existing.role) {
      return existing;
    }
    if (role === null) {
      return refuse(deps, config, identity, meta, NO_ROLE, existing);
    }
    return deps.db.transaction(async (tx) => {
      const admins = await lockActiveAdmins(tx);
      // Demoting the last enabled admin would leave nobody to fix the mapping: it keeps its role.
      if (admins.includes(existing.id) && admins.length <= 1 && role !== "admin") {
        return (await findBySubject(tx, identity.issuer, identity.subject)) ?? existing;
      }
      const rows = await tx.update(users).set({ role }).where(eq(users.id, existing.id)).returning();
      await writeAudit(tx, deps, {
        actor: { userId: existing.id, username: existing.username, role: existing.role, via: "session" },
        ip: meta.ip,
        action: "user.update",
        targetKind: "user",
        targetId: existing.id,
        details: { fields: ["role"], from: existing.role, to: role, by: "sso" },
      });
      return rows[0] ?? existing;
    });
  }
  if (role === null) {
    return refuse(deps, config, identity, meta, NO_ROLE, undefined);
  }
  const username = await freeName(deps.db, usernameFromClaims(config, identity.claims, identity.subject));
  try {
    return await deps.db.transaction(async (tx) => {
      const rows = await tx
        .insert(users)
        .values({
          id: deps.ids.ulid(deps.clock.now()),
          username,
          passwordHash: null,
          role,
          createdAt: deps.clock.now(),
          ssoIssuer: identity.issuer,
          ssoSubject: identity.subject,
        })
        .returning();
      const user = rows[0];
      if (!user) {
        throw new Error("insert returned no user");
      }
      await writeAudit(tx, deps, {
        actor: { userId: user.id, username: user.username, role, via: "session" },
        ip: meta.ip,
        action: "user.create",
        targetKind: "user",
        targetId: user.id,
        details: { role, by: "sso" },
      });
      return user;
    });
  } catch (error) {
    // The same person's first sign-in in two tabs at once: the other one created the user.
    const raced = isUniqueViolation(error)
      ? await findBySubject(deps.db, identity.issuer, identity.subject)
      : undefined;
    if (raced === undefined) {
      throw error;
    }
    return raced;
  }
}
