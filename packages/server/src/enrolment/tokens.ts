/**
 * @module enrolment/tokens
 * Operator-minted one-time enrolment tokens. The token is stored only as its SHA-256; attached
 * repository credentials are sealed with that hash as additional data, so the blob opens only
 * for the holder of the token, and only until it is burned.
 */
import { generateRepositoryPassword, hashToken, randomToken, sealJson } from "@fleetback/crypto";
import { type Database, enrolmentTokens } from "@fleetback/db";
import { renderInstallCommand } from "@fleetback/installer";
import type { Repository } from "@fleetback/protocol";
import { and, desc, gt, isNull } from "drizzle-orm";
import { type AuditContext, writeAudit } from "../audit/audit.js";
import type { Clock } from "../clock.js";
import type { Ids } from "../ids.js";

export const ENROLMENT_TOKEN_TTL_MS = 60 * 60 * 1000;

export function enrolmentAad(tokenHash: string): string {
  return `enrolment:${tokenHash}`;
}

export interface MintInput {
  repository?: { url: string; username?: string | undefined; password?: string | undefined } | undefined;
  initialPaths?: string[] | undefined;
}

export interface MintedToken {
  id: string;
  token: string;
  expiresAt: Date;
  /** Present when the server generated the repository password; shown once. */
  generatedPassword: string | undefined;
  /** For rest-server repositories with a username: how to add the user to its password file. */
  htpasswdSnippet: string | undefined;
  installCommand: string;
}

function shellQuote(value: string): string {
  return `'${value.replaceAll("'", "'\\''")}'`;
}

/** rest-server keeps users in .htpasswd; `-i` reads the password from stdin, so it is not in argv. */
export function htpasswdSnippet(username: string, password: string): string {
  return `printf '%s\\n' ${shellQuote(password)} | htpasswd -i -B /var/lib/rest-server/.htpasswd ${shellQuote(username)}`;
}

export async function mintEnrolmentToken(
  deps: { db: Database; clock: Clock; ids: Ids; keys: { secret: Uint8Array }; config: { baseUrl: string } },
  audit: AuditContext,
  input: MintInput,
): Promise<MintedToken> {
  const now = deps.clock.now();
  const token = randomToken("fbe");
  const tokenHash = hashToken(token);
  let generatedPassword: string | undefined;
  let sealedRepository: Uint8Array | undefined;
  let snippet: string | undefined;
  if (input.repository) {
    const password = input.repository.password || generateRepositoryPassword();
    generatedPassword = input.repository.password ? undefined : password;
    const repository: Repository = { url: input.repository.url, password };
    if (input.repository.username) {
      repository.username = input.repository.username;
    }
    sealedRepository = sealJson(deps.keys.secret, repository, enrolmentAad(tokenHash));
    if (generatedPassword && repository.username && repository.url.startsWith("rest:")) {
      snippet = htpasswdSnippet(repository.username, generatedPassword);
    }
  }
  const id = deps.ids.ulid(now);
  const expiresAt = new Date(now.getTime() + ENROLMENT_TOKEN_TTL_MS);
  await deps.db.transaction(async (tx) => {
    await tx.insert(enrolmentTokens).values({
      id,
      tokenHash,
      sealedRepository,
      initialPaths: input.initialPaths ?? [],
      createdBy: audit.actor.userId,
      createdAt: now,
      expiresAt,
    });
    await writeAudit(tx, deps, {
      ...audit,
      action: "enrolment_token.create",
      targetKind: "enrolment_token",
      targetId: id,
      details: {
        has_repository: input.repository !== undefined,
        initial_paths: input.initialPaths?.length ?? 0,
      },
    });
  });
  return {
    id,
    token,
    expiresAt,
    generatedPassword,
    htpasswdSnippet: snippet,
    installCommand: renderInstallCommand({ baseUrl: deps.config.baseUrl, token }),
  };
}

/** Tokens still usable; never the token itself (only its hash is stored anyway). */
export async function listUsableTokens(db: Database, clock: Clock) {
  const rows = await db
    .select({
      id: enrolmentTokens.id,
      createdAt: enrolmentTokens.createdAt,
      expiresAt: enrolmentTokens.expiresAt,
      initialPaths: enrolmentTokens.initialPaths,
      sealedRepository: enrolmentTokens.sealedRepository,
    })
    .from(enrolmentTokens)
    .where(and(isNull(enrolmentTokens.consumedAt), gt(enrolmentTokens.expiresAt, clock.now())))
    .orderBy(desc(enrolmentTokens.id));
  return rows.map((row) => ({
    id: row.id,
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
    initialPaths: row.initialPaths,
    hasRepository: row.sealedRepository !== null,
  }));
}
