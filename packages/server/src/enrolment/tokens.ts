/**
 * @module enrolment/tokens
 * Operator-minted one-time enrolment tokens. The token is stored only as its SHA-256; attached
 * repository credentials are sealed with that hash as additional data, so the blob opens only
 * for the holder of the token, and only until it is burned.
 */

import { generateRepositoryPassword, hashToken, randomToken, sealJson } from "@fleetback/crypto";
import { type Database, enrolmentTokens, hosts, users } from "@fleetback/db";
import { renderInstallCommand } from "@fleetback/installer";
import type { Repository } from "@fleetback/protocol";
import { and, desc, eq, gt, isNull, sql } from "drizzle-orm";
import { type AuditContext, writeAudit } from "../audit/audit.js";
import type { Clock } from "../clock.js";
import { notFound } from "../errors.js";
import { capAtCredentialExpiry } from "../http/app-env.js";
import type { Ids } from "../ids.js";
import type { Labels } from "../labels/label-rules.js";
import { defaultInitialSchedule, type InitialSchedule } from "./initial-schedule.js";

export const ENROLMENT_TOKEN_TTL_MS = 60 * 60 * 1000;

export function enrolmentAad(tokenHash: string): string {
  return `enrolment:${tokenHash}`;
}

export interface MintInput {
  repository?: { url: string; username?: string | undefined; password?: string | undefined } | undefined;
  initialPaths?: string[] | undefined;
  /** The initial paths' schedule and retention; null: none; undefined: the default. */
  initialSchedule?: InitialSchedule | null | undefined;
  /** Every host enrolled with the token gets these labels (checked by checkMintInput). */
  labels?: Labels | undefined;
}

export interface MintedToken {
  id: string;
  token: string;
  expiresAt: Date;
  /** Present when the server generated the repository password; shown once. */
  generatedPassword: string | undefined;
  /**
   * With a generated repository password, a rest-server user gets a login password of its own,
   * so the repository server's htpasswd never holds the key to the repository; shown once.
   */
  generatedLoginPassword: string | undefined;
  /**
   * For rest-server repositories with a username: how to add the user, with its login password,
   * to its existing password file.
   */
  htpasswdSnippet: string | undefined;
  /** The same for a password file that does not exist yet (`htpasswd -c`, which would overwrite one). */
  htpasswdNewFileSnippet: string | undefined;
  installCommand: string;
}

function shellQuote(value: string): string {
  return `'${value.replaceAll("'", "'\\''")}'`;
}

/**
 * rest-server keeps users in .htpasswd, bcrypt (`-B`); `-i` reads the password from stdin, so it
 * is not in argv. `newFile` adds `-c`, which creates the file and would replace an existing one.
 * `path` is the file the operator's rest-server reads (FLEETBACK_HTPASSWD_PATH, checked by
 * config.ts to need no quoting).
 */
export function htpasswdSnippet(path: string, username: string, password: string, newFile = false): string {
  const flags = newFile ? "-i -B -c" : "-i -B";
  return `printf '%s\\n' ${shellQuote(password)} | htpasswd ${flags} ${path} ${shellQuote(username)}`;
}

/** When a token minted at `now` stops being usable: within the hour, and not after its minter's credential. */
function tokenExpiry(audit: AuditContext, now: Date): Date {
  return capAtCredentialExpiry(audit.actor, new Date(now.getTime() + ENROLMENT_TOKEN_TTL_MS));
}

/** Stores a minted token as `audit`'s actor's, with its audit entry, inside the transaction `tx`. */
async function storeToken(
  tx: Database,
  deps: { clock: Clock; ids: Ids },
  audit: AuditContext,
  row: Omit<typeof enrolmentTokens.$inferInsert, "createdBy">,
  details: Record<string, unknown>,
): Promise<void> {
  await tx.insert(enrolmentTokens).values({ ...row, createdBy: audit.actor.userId });
  await writeAudit(tx, deps, {
    ...audit,
    action: "enrolment_token.create",
    targetKind: "enrolment_token",
    targetId: row.id,
    details,
  });
}

export async function mintEnrolmentToken(
  deps: {
    db: Database;
    clock: Clock;
    ids: Ids;
    keys: { secret: Uint8Array };
    config: { baseUrl: string; htpasswdPath: string };
  },
  audit: AuditContext,
  input: MintInput,
): Promise<MintedToken> {
  const now = deps.clock.now();
  const token = randomToken("fbe");
  const tokenHash = hashToken(token);
  let generatedPassword: string | undefined;
  let generatedLoginPassword: string | undefined;
  let sealedRepository: Uint8Array | undefined;
  let snippet: string | undefined;
  let newFileSnippet: string | undefined;
  if (input.repository) {
    const password = input.repository.password || generateRepositoryPassword();
    generatedPassword = input.repository.password ? undefined : password;
    const repository: Repository = { url: input.repository.url, password };
    if (input.repository.username) {
      repository.username = input.repository.username;
    }
    // An operator's own password may already be the user's htpasswd login: it keeps serving both.
    if (generatedPassword && repository.username && repository.url.startsWith("rest:")) {
      generatedLoginPassword = generateRepositoryPassword();
      repository.login_password = generatedLoginPassword;
      const path = deps.config.htpasswdPath;
      snippet = htpasswdSnippet(path, repository.username, generatedLoginPassword);
      newFileSnippet = htpasswdSnippet(path, repository.username, generatedLoginPassword, true);
    }
    sealedRepository = sealJson(deps.keys.secret, repository, enrolmentAad(tokenHash));
  }
  const id = deps.ids.ulid(now);
  const initialSchedule =
    input.initialSchedule === undefined ? defaultInitialSchedule() : input.initialSchedule;
  const expiresAt = tokenExpiry(audit, now);
  await deps.db.transaction((tx) =>
    storeToken(
      tx,
      deps,
      audit,
      {
        id,
        tokenHash,
        sealedRepository,
        initialPaths: input.initialPaths ?? [],
        initialSchedule,
        labels: input.labels ?? {},
        createdAt: now,
        expiresAt,
      },
      {
        has_repository: input.repository !== undefined,
        initial_paths: input.initialPaths?.length ?? 0,
        initial_schedule: initialSchedule,
        labels: input.labels ?? {},
      },
    ),
  );
  return {
    id,
    token,
    expiresAt,
    generatedPassword,
    generatedLoginPassword,
    htpasswdSnippet: snippet,
    htpasswdNewFileSnippet: newFileSnippet,
    installCommand: renderInstallCommand({ baseUrl: deps.config.baseUrl, token }),
  };
}

/**
 * A token that makes the machine enrolling with it the successor of `hostId` (issue 38.2): it
 * carries no repository, paths or labels (the host has its own), and it is for admins only, as
 * the machine gets the host's repository credentials at its first hello. The host's deletion
 * deletes it.
 */
export async function mintSuccessorToken(
  deps: { db: Database; clock: Clock; ids: Ids; config: { baseUrl: string } },
  audit: AuditContext,
  hostId: string,
): Promise<MintedToken & { hostName: string }> {
  const now = deps.clock.now();
  const token = randomToken("fbe");
  const id = deps.ids.ulid(now);
  const expiresAt = tokenExpiry(audit, now);
  const hostName = await deps.db.transaction(async (tx) => {
    const [host] = await tx
      .select({ name: hosts.name })
      .from(hosts)
      .where(eq(hosts.id, hostId))
      .for("update");
    if (!host) {
      throw notFound(`No host ${hostId}`);
    }
    await storeToken(
      tx,
      deps,
      audit,
      {
        id,
        tokenHash: hashToken(token),
        initialPaths: [],
        initialSchedule: null,
        labels: {},
        successorOf: hostId,
        createdAt: now,
        expiresAt,
      },
      { successor_of: hostId, host_name: host.name },
    );
    return host.name;
  });
  return {
    id,
    token,
    expiresAt,
    hostName,
    generatedPassword: undefined,
    generatedLoginPassword: undefined,
    htpasswdSnippet: undefined,
    htpasswdNewFileSnippet: undefined,
    installCommand: renderInstallCommand({ baseUrl: deps.config.baseUrl, token }),
  };
}

function usable(clock: Clock) {
  return and(isNull(enrolmentTokens.consumedAt), gt(enrolmentTokens.expiresAt, clock.now()));
}

/** Tokens still usable, with who minted them; never the token itself (only its hash is stored). */
export async function listUsableTokens(db: Database, clock: Clock) {
  const rows = await db
    .select({
      id: enrolmentTokens.id,
      createdAt: enrolmentTokens.createdAt,
      expiresAt: enrolmentTokens.expiresAt,
      initialPaths: enrolmentTokens.initialPaths,
      initialSchedule: enrolmentTokens.initialSchedule,
      labels: enrolmentTokens.labels,
      hasRepository: sql<boolean>`${enrolmentTokens.sealedRepository} is not null`,
      successorOf: enrolmentTokens.successorOf,
      createdBy: enrolmentTokens.createdBy,
      createdByName: users.username,
    })
    .from(enrolmentTokens)
    .leftJoin(users, eq(users.id, enrolmentTokens.createdBy))
    .where(usable(clock))
    .orderBy(desc(enrolmentTokens.id));
  return rows.map((row) => ({ ...row, hasRepository: Boolean(row.hasRepository) }));
}

/**
 * Revokes a token not yet used: its row goes, so its hash can no longer be presented. A used or
 * expired token is not found: there is nothing left to revoke.
 */
export async function revokeEnrolmentToken(
  deps: { db: Database; clock: Clock; ids: Ids },
  audit: AuditContext,
  id: string,
): Promise<void> {
  await deps.db.transaction(async (tx) => {
    const removed = await tx
      .delete(enrolmentTokens)
      .where(and(eq(enrolmentTokens.id, id), usable(deps.clock)))
      .returning({ id: enrolmentTokens.id });
    if (removed.length === 0) {
      throw notFound(`No unused enrolment token ${id}`);
    }
    await writeAudit(tx, deps, {
      ...audit,
      action: "enrolment_token.revoke",
      targetKind: "enrolment_token",
      targetId: id,
    });
  });
}
