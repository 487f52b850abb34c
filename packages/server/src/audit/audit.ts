/**
 * @module audit/audit
 * The audit trail: who did what to which target. Entries never hold a secret; callers pass only
 * the names of fields they changed, never their values. A user who signs in through the identity
 * provider is marked as such wherever they act or are acted on: their name came from the
 * provider's claims, not from an admin, and may look like a local one's.
 */
import {
  type AuditEntry,
  apiTokens,
  auditLog,
  type Database,
  hosts,
  notificationChannels,
  sourceGroups,
  users,
} from "@fleetback/db";
import { and, desc, eq, inArray, isNotNull, lt } from "drizzle-orm";
import type { Clock } from "../clock.js";
import type { Actor } from "../http/app-env.js";
import type { Ids } from "../ids.js";

/**
 * Who made a change and from where. A domain function that changes something takes this and
 * writes the audit entry in the change's own transaction, so the two commit or fail together.
 */
export interface AuditContext {
  actor: Actor;
  ip: string | undefined;
}

export interface AuditInput {
  actor: Actor | "system" | "agent";
  action: string;
  targetKind?: string;
  targetId?: string;
  details?: Record<string, unknown>;
  ip?: string | undefined;
  /** Minted by a caller that may have to remove the entry with what it audits (jobs/start-job.ts). */
  id?: string;
}

/** `db` is the change's transaction wherever there is one. */
export async function writeAudit(
  db: Database,
  deps: { clock: Clock; ids: Ids },
  input: AuditInput,
): Promise<void> {
  const at = deps.clock.now();
  const actor = input.actor;
  await db.insert(auditLog).values({
    id: input.id ?? deps.ids.ulid(at),
    at,
    actorKind: typeof actor === "string" ? actor : "user",
    actorUserId: typeof actor === "string" ? null : actor.userId,
    action: input.action,
    targetKind: input.targetKind,
    targetId: input.targetId,
    details: input.details ?? {},
    ip: input.ip?.slice(0, 64),
  });
}

export interface AuditRow extends AuditEntry {
  username: string | null;
  /** The acting user signs in through the identity provider (their name came from its claims). */
  actorSso: boolean;
  /** The target's name now (host, user, source group, API token, channel); null when gone or nameless. */
  targetName: string | null;
  /** The target is a user who signs in through the identity provider. */
  targetSso: boolean;
}

/** The kinds of target whose name we can look up, and where. */
const NAMED_TARGETS = {
  host: { table: hosts, id: hosts.id, name: hosts.name },
  user: { table: users, id: users.id, name: users.username },
  source_group: { table: sourceGroups, id: sourceGroups.id, name: sourceGroups.name },
  api_token: { table: apiTokens, id: apiTokens.id, name: apiTokens.name },
  notification_channel: {
    table: notificationChannels,
    id: notificationChannels.id,
    name: notificationChannels.name,
  },
} as const;

/** One query per kind of target on the page, not one per entry. */
async function targetNames(
  db: Database,
  entries: AuditEntry[],
): Promise<{ names: Map<string, string>; sso: Set<string> }> {
  const names = new Map<string, string>();
  const sso = new Set<string>();
  for (const [kind, source] of Object.entries(NAMED_TARGETS)) {
    const ids = [
      ...new Set(entries.filter((e) => e.targetKind === kind && e.targetId).map((e) => e.targetId as string)),
    ];
    if (ids.length === 0) {
      continue;
    }
    const rows = await db
      .select({ id: source.id, name: source.name })
      .from(source.table)
      .where(inArray(source.id, ids));
    for (const row of rows) {
      names.set(`${kind}:${row.id}`, row.name);
    }
  }
  const userIds = [
    ...new Set(entries.filter((e) => e.targetKind === "user" && e.targetId).map((e) => e.targetId as string)),
  ];
  if (userIds.length > 0) {
    const rows = await db
      .select({ id: users.id })
      .from(users)
      .where(and(inArray(users.id, userIds), isNotNull(users.ssoSubject)));
    for (const row of rows) {
      sso.add(`user:${row.id}`);
    }
  }
  return { names, sso };
}

/** Newest first; `before` is the id of the last row of the previous page. */
export async function listAudit(
  db: Database,
  options: { limit: number; before?: string | undefined; action?: string | undefined },
): Promise<AuditRow[]> {
  const conditions = [];
  if (options.before) {
    conditions.push(lt(auditLog.id, options.before));
  }
  if (options.action) {
    conditions.push(eq(auditLog.action, options.action));
  }
  const rows = await db
    .select({ entry: auditLog, username: users.username, ssoSubject: users.ssoSubject })
    .from(auditLog)
    .leftJoin(users, eq(users.id, auditLog.actorUserId))
    .where(conditions.length > 0 ? and(...conditions) : undefined)
    .orderBy(desc(auditLog.id))
    .limit(options.limit);
  const targets = await targetNames(
    db,
    rows.map((row) => row.entry),
  );
  return rows.map((row) => {
    const key = `${row.entry.targetKind}:${row.entry.targetId}`;
    return {
      ...row.entry,
      username: row.username,
      actorSso: row.ssoSubject !== null,
      targetName: targets.names.get(key) ?? null,
      targetSso: targets.sso.has(key),
    };
  });
}
