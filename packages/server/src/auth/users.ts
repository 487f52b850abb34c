/**
 * @module auth/users
 * Operators and their passwords (argon2id). Login answers the same, in the same time, for an
 * unknown user and a wrong password, so it reveals neither which names exist nor which failed.
 */
import { hashPassword, verifyPassword } from "@fleetback/crypto";
import { type Database, isUniqueViolation, type User, type UserRole, users } from "@fleetback/db";
import { and, asc, count, eq, isNull, sql } from "drizzle-orm";
import { type AuditContext, writeAudit } from "../audit/audit.js";
import type { Clock } from "../clock.js";
import type { ServerDeps } from "../deps.js";
import { conflict, invalid, notFound } from "../errors.js";
import type { Ids } from "../ids.js";
import { deleteOtherSessions, deleteUserSessions } from "./sessions.js";

export type UserDeps = Pick<ServerDeps, "db" | "clock" | "ids">;

export const USERNAME_PATTERN = "^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$";
export const MIN_PASSWORD_LENGTH = 12;

/**
 * Verified against for an unknown user, so login does the same argon2id work as for a known one.
 * A fixed string rather than one hashed at first use: nothing to cache per process. Its parameters
 * must be PASSWORD_HASH_PARAMS (users.test.ts checks), or the work would differ.
 */
export const DUMMY_PASSWORD_HASH =
  "$argon2id$v=19$m=65536,t=3,p=4$gC7494dImYx/QWHJKAxHIQ$vfV8eYjy5VuWwHGz74vtBWZZ4Eui7+MZVAJlrGnc428";

/**
 * The password rules, each with the sentence the pages show before anyone types (issue 35.7)
 * and the refusal when it fails: one list, so the form never promises less than the check.
 */
export const PASSWORD_RULES: readonly {
  rule: string;
  refusal: string;
  fails(password: string, username: string): boolean;
}[] = [
  {
    rule: `At least ${MIN_PASSWORD_LENGTH} characters.`,
    refusal: `must be at least ${MIN_PASSWORD_LENGTH} characters`,
    fails: (password) => [...password].length < MIN_PASSWORD_LENGTH,
  },
  {
    rule: "Must not contain the username (in any letter case).",
    refusal: "must not contain the username",
    fails: (password, username) => password.toLowerCase().includes(username.toLowerCase()),
  },
];

/** What the password forms render: the rules' sentences and the length the input enforces. */
export const passwordPolicy = {
  minLength: MIN_PASSWORD_LENGTH,
  rules: PASSWORD_RULES.map((entry) => entry.rule),
};

/** `field` names the form or JSON field in the error (new_password when a user changes their own). */
export function checkPasswordStrength(password: string, username: string, field = "password"): void {
  const failed = PASSWORD_RULES.find((entry) => entry.fails(password, username));
  if (failed) {
    throw invalid(`${field}: ${failed.refusal}`);
  }
}

/** The insert alone, for a caller that audits it (addUser, the first admin's bootstrap). */
export async function createUser(
  db: Database,
  deps: { clock: Clock; ids: Ids },
  input: { username: string; password: string; role: UserRole },
): Promise<User> {
  checkPasswordStrength(input.password, input.username);
  const passwordHash = await hashPassword(input.password);
  const now = deps.clock.now();
  try {
    const rows = await db
      .insert(users)
      .values({
        id: deps.ids.ulid(now),
        username: input.username,
        passwordHash,
        role: input.role,
        createdAt: now,
      })
      .returning();
    const user = rows[0];
    if (!user) {
      throw new Error("insert returned no row");
    }
    return user;
  } catch (err) {
    if (isUniqueViolation(err)) {
      throw conflict(`username: "${input.username}" is already taken`);
    }
    throw err;
  }
}

/** An admin adds a user. */
export async function addUser(
  deps: UserDeps,
  audit: AuditContext,
  input: { username: string; password: string; role: UserRole },
): Promise<User> {
  return deps.db.transaction(async (tx) => {
    const user = await createUser(tx, deps, input);
    await writeAudit(tx, deps, {
      ...audit,
      action: "user.create",
      targetKind: "user",
      targetId: user.id,
      details: { role: user.role },
    });
    return user;
  });
}

export async function findUserByName(db: Database, username: string): Promise<User | undefined> {
  const rows = await db
    .select()
    .from(users)
    .where(sql`lower(${users.username}) = lower(${username})`)
    .limit(1);
  return rows[0];
}

/** The user when the password matches an enabled account; undefined otherwise, in constant work. */
export async function verifyLogin(
  db: Database,
  username: string,
  password: string,
): Promise<User | undefined> {
  const user = await findUserByName(db, username);
  // A single sign-on user has no password: the dummy hash keeps the work (and the timing) the same.
  const hash = user?.passwordHash ?? DUMMY_PASSWORD_HASH;
  const ok = await verifyPassword(password, hash);
  return ok && user && user.passwordHash !== null && user.disabledAt === null ? user : undefined;
}

/** A single sign-on user's password is the identity provider's: Fleetback never sets one. */
function refuseSsoPassword(user: User, field: string): void {
  if (user.ssoSubject !== null) {
    throw conflict(
      `${field}: this user signs in through single sign-on; the identity provider keeps the password`,
    );
  }
}

export async function countUsers(db: Database): Promise<number> {
  const rows = await db.select({ n: count() }).from(users);
  return rows[0]?.n ?? 0;
}

/**
 * The ids of the enabled admins, their rows locked until the transaction ends: two changes that
 * would each remove one of the last two admins (two sign-ins re-mapping roles, two admins at the
 * Users page) then run one after the other, and the second counts what the first left (a waiting
 * FOR UPDATE re-reads the row it waited for, so a demoted admin drops out of its answer).
 */
export async function lockActiveAdmins(tx: Database): Promise<string[]> {
  const rows = await tx
    .select({ id: users.id })
    .from(users)
    .where(and(eq(users.role, "admin"), isNull(users.disabledAt)))
    .orderBy(asc(users.id))
    .for("update");
  return rows.map((row) => row.id);
}

export async function listUsers(db: Database): Promise<User[]> {
  return db.select().from(users).orderBy(asc(users.username));
}

export async function getUser(db: Database, id: string): Promise<User> {
  const rows = await db.select().from(users).where(eq(users.id, id)).limit(1);
  const user = rows[0];
  if (!user) {
    throw notFound(`No user ${id}`);
  }
  return user;
}

export interface UserPatch {
  role?: UserRole | undefined;
  password?: string | undefined;
  disabled?: boolean | undefined;
}

/**
 * Applies a patch and ends the user's sessions, so the change takes effect at once; refuses to
 * leave the service without an enabled admin.
 */
export async function updateUser(
  deps: UserDeps,
  audit: AuditContext,
  id: string,
  patch: UserPatch,
): Promise<User> {
  return deps.db.transaction(async (tx) => {
    const admins = await lockActiveAdmins(tx);
    const user = await getUser(tx, id);
    const losesAdmin =
      admins.includes(user.id) &&
      ((patch.role !== undefined && patch.role !== "admin") || patch.disabled === true);
    if (losesAdmin && admins.length <= 1) {
      throw conflict("role: the last enabled admin cannot be demoted or disabled");
    }
    const changes: Partial<User> = {};
    if (patch.role !== undefined) {
      changes.role = patch.role;
    }
    if (patch.disabled !== undefined) {
      changes.disabledAt = patch.disabled ? deps.clock.now() : null;
    }
    if (patch.password !== undefined) {
      refuseSsoPassword(user, "password");
      checkPasswordStrength(patch.password, user.username);
      changes.passwordHash = await hashPassword(patch.password);
    }
    const rows = await tx.update(users).set(changes).where(eq(users.id, id)).returning();
    await deleteUserSessions(tx, id);
    await writeAudit(tx, deps, {
      ...audit,
      action: "user.update",
      targetKind: "user",
      targetId: id,
      details: { fields: Object.keys(patch).filter((key) => patch[key as keyof UserPatch] !== undefined) },
    });
    return rows[0] ?? user;
  });
}

export async function deleteUser(deps: UserDeps, audit: AuditContext, id: string): Promise<void> {
  await deps.db.transaction(async (tx) => {
    const admins = await lockActiveAdmins(tx);
    const user = await getUser(tx, id);
    if (admins.includes(user.id) && admins.length <= 1) {
      throw conflict("user: the last enabled admin cannot be deleted");
    }
    await tx.delete(users).where(eq(users.id, id));
    await writeAudit(tx, deps, { ...audit, action: "user.delete", targetKind: "user", targetId: id });
  });
}

/**
 * A signed-in user changes their own password: the current one is verified first (a borrowed
 * session alone cannot take the account over), and every other session of theirs ends while the
 * one making the change stays signed in. The audit entry names no password, only the change.
 */
export async function changeOwnPassword(
  deps: UserDeps,
  audit: AuditContext,
  input: { currentPassword: string; newPassword: string },
): Promise<void> {
  const user = await getUser(deps.db, audit.actor.userId);
  refuseSsoPassword(user, "current_password");
  if (!(await verifyPassword(input.currentPassword, user.passwordHash ?? DUMMY_PASSWORD_HASH))) {
    throw invalid("current_password: is wrong");
  }
  if (input.newPassword === input.currentPassword) {
    throw invalid("new_password: must differ from the current password");
  }
  checkPasswordStrength(input.newPassword, user.username, "new_password");
  const passwordHash = await hashPassword(input.newPassword);
  await deps.db.transaction(async (tx) => {
    await tx.update(users).set({ passwordHash }).where(eq(users.id, user.id));
    await deleteOtherSessions(tx, user.id, audit.actor.sessionId);
    await writeAudit(tx, deps, {
      ...audit,
      action: "user.password_change",
      targetKind: "user",
      targetId: user.id,
    });
  });
}

/**
 * An admin sets a new password for another user, who is signed out everywhere and signs in with
 * it. Not for the admin's own account: that is changeOwnPassword, which asks for the current one.
 */
export async function resetPassword(
  deps: UserDeps,
  audit: AuditContext,
  id: string,
  password: string,
): Promise<void> {
  if (id === audit.actor.userId) {
    throw conflict("password: change your own password on /account/password, with your current one");
  }
  await deps.db.transaction(async (tx) => {
    const user = await getUser(tx, id);
    refuseSsoPassword(user, "password");
    checkPasswordStrength(password, user.username);
    const passwordHash = await hashPassword(password);
    await tx.update(users).set({ passwordHash }).where(eq(users.id, id));
    await deleteUserSessions(tx, id);
    await writeAudit(tx, deps, { ...audit, action: "user.password_reset", targetKind: "user", targetId: id });
  });
}
