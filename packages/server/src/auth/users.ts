/**
 * @module auth/users
 * Operators and their passwords (argon2id). Login answers the same, in the same time, for an
 * unknown user and a wrong password, so it reveals neither which names exist nor which failed.
 */
import { hashPassword, verifyPassword } from "@fleetback/crypto";
import { type Database, isUniqueViolation, type User, type UserRole, users } from "@fleetback/db";
import { and, asc, count, eq, isNull, sql } from "drizzle-orm";
import { ulid } from "ulidx";
import type { Clock } from "../clock.js";
import { conflict, invalid, notFound } from "../errors.js";

export const USERNAME_PATTERN = "^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$";
export const MIN_PASSWORD_LENGTH = 12;

let dummyHash: Promise<string> | undefined;

/** Runs the same argon2id work for an unknown user as for a known one. */
function dummyPasswordHash(): Promise<string> {
  dummyHash ??= hashPassword("fleetback-timing-equaliser");
  return dummyHash;
}

export function checkPasswordStrength(password: string, username: string): void {
  if ([...password].length < MIN_PASSWORD_LENGTH) {
    throw invalid(`password: must be at least ${MIN_PASSWORD_LENGTH} characters`);
  }
  if (password.toLowerCase().includes(username.toLowerCase())) {
    throw invalid("password: must not contain the username");
  }
}

export async function createUser(
  db: Database,
  clock: Clock,
  input: { username: string; password: string; role: UserRole },
): Promise<User> {
  checkPasswordStrength(input.password, input.username);
  const passwordHash = await hashPassword(input.password);
  const now = clock.now();
  try {
    const rows = await db
      .insert(users)
      .values({
        id: ulid(now.getTime()),
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
  const hash = user?.passwordHash ?? (await dummyPasswordHash());
  const ok = await verifyPassword(password, hash);
  return ok && user && user.disabledAt === null ? user : undefined;
}

export async function countUsers(db: Database): Promise<number> {
  const rows = await db.select({ n: count() }).from(users);
  return rows[0]?.n ?? 0;
}

async function countActiveAdmins(db: Database): Promise<number> {
  const rows = await db
    .select({ n: count() })
    .from(users)
    .where(and(eq(users.role, "admin"), isNull(users.disabledAt)));
  return rows[0]?.n ?? 0;
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

/** Applies a patch; refuses to leave the service without an enabled admin. */
export async function updateUser(db: Database, clock: Clock, id: string, patch: UserPatch): Promise<User> {
  const user = await getUser(db, id);
  const losesAdmin =
    user.role === "admin" &&
    user.disabledAt === null &&
    ((patch.role !== undefined && patch.role !== "admin") || patch.disabled === true);
  if (losesAdmin && (await countActiveAdmins(db)) <= 1) {
    throw conflict("role: the last enabled admin cannot be demoted or disabled");
  }
  const changes: Partial<User> = {};
  if (patch.role !== undefined) {
    changes.role = patch.role;
  }
  if (patch.disabled !== undefined) {
    changes.disabledAt = patch.disabled ? clock.now() : null;
  }
  if (patch.password !== undefined) {
    checkPasswordStrength(patch.password, user.username);
    changes.passwordHash = await hashPassword(patch.password);
  }
  const rows = await db.update(users).set(changes).where(eq(users.id, id)).returning();
  return rows[0] ?? user;
}

export async function deleteUser(db: Database, id: string): Promise<void> {
  const user = await getUser(db, id);
  if (user.role === "admin" && user.disabledAt === null && (await countActiveAdmins(db)) <= 1) {
    throw conflict("user: the last enabled admin cannot be deleted");
  }
  await db.delete(users).where(eq(users.id, id));
}
