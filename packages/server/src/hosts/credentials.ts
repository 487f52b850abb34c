/**
 * @module hosts/credentials
 * A host's repository and admin credentials: sealed with the host id as additional data (so a
 * blob copied onto another host's row fails to open), merged field by field on edit (a field an
 * edit leaves out keeps its stored value), and
 * pushed to a connected agent with `config.update` (a separate login only to an agent that knows
 * it: hosts/login-password-gate.ts). A slot that fails to open is reported as a
 * value and logged without its content; it never takes the caller down.
 */
import { openJson, sealJson } from "@fleetback/crypto";
import { type Database, hostCredentials, hosts } from "@fleetback/db";
import type { CredentialSlot, Repository } from "@fleetback/protocol";
import { and, eq, isNotNull } from "drizzle-orm";
import { type AuditContext, writeAudit } from "../audit/audit.js";
import type { ServerDeps } from "../deps.js";
import { loginWithheldReason } from "./login-password-gate.js";

export type { CredentialSlot, Repository };

/**
 * What an operator may send: absent fields keep their stored value; `username` or
 * `login_password` null or "" removes it. `login_password` is the repository server's login of
 * `username`, kept apart from `password`, which opens the repository; it goes with the username.
 */
export interface CredentialPatch {
  url?: string;
  username?: string | null;
  password?: string;
  login_password?: string | null;
}

export type SlotState =
  | { state: "absent" }
  | { state: "bound"; credentials: Repository }
  | { state: "unreadable"; reason: string };

export type StoredCredentials = Record<CredentialSlot, SlotState>;

const SEALED_COLUMN = {
  repo: "repoSealed",
  admin: "adminSealed",
  mirror: "mirrorSealed",
} as const satisfies Record<CredentialSlot, keyof typeof hostCredentials.$inferInsert>;

export function hostCredentialsAad(hostId: string): string {
  return `host:${hostId}`;
}

/** The record as stored and pushed: optional fields only when they say something. */
function repositoryOf(
  url: string,
  password: string,
  username: string | null | undefined,
  loginPassword: string | null | undefined,
): Repository {
  const record: Repository = { url, password };
  if (username) {
    record.username = username;
    // A login is the username's: without one there is nothing to log in as.
    if (loginPassword) {
      record.login_password = loginPassword;
    }
  }
  return record;
}

export function sealHostCredentials(key: Uint8Array, hostId: string, credentials: Repository): Uint8Array {
  const { url, password, username, login_password } = credentials;
  return sealJson(key, repositoryOf(url, password, username, login_password), hostCredentialsAad(hostId));
}

function isRepository(value: unknown): value is Repository {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return false;
  }
  const record = value as Record<string, unknown>;
  return (
    typeof record.url === "string" &&
    record.url !== "" &&
    typeof record.password === "string" &&
    record.password !== "" &&
    (record.username === undefined || typeof record.username === "string") &&
    (record.login_password === undefined || typeof record.login_password === "string")
  );
}

export function openHostCredentials(key: Uint8Array, hostId: string, sealed: Uint8Array | null): SlotState {
  if (sealed === null) {
    return { state: "absent" };
  }
  const opened = openJson(key, sealed, hostCredentialsAad(hostId));
  if (!opened.ok) {
    return { state: "unreadable", reason: opened.reason };
  }
  if (!isRepository(opened.value)) {
    return { state: "unreadable", reason: "not a {url, username?, password, login_password?} record" };
  }
  const { url, username, password, login_password } = opened.value;
  return { state: "bound", credentials: repositoryOf(url, password, username, login_password) };
}

/** Every slot of a host, opened; `db` may be a transaction. */
export async function loadHostCredentials(
  db: Database,
  key: Uint8Array,
  hostId: string,
): Promise<StoredCredentials> {
  const [row] = await db
    .select({
      repo: hostCredentials.repoSealed,
      admin: hostCredentials.adminSealed,
      mirror: hostCredentials.mirrorSealed,
    })
    .from(hostCredentials)
    .where(eq(hostCredentials.hostId, hostId));
  return {
    repo: openHostCredentials(key, hostId, row?.repo ?? null),
    admin: openHostCredentials(key, hostId, row?.admin ?? null),
    mirror: openHostCredentials(key, hostId, row?.mirror ?? null),
  };
}

/** The bound slots that open; a slot that does not is logged (never its content) and left out. */
export async function readHostCredentials(
  deps: Pick<ServerDeps, "db" | "keys" | "log">,
  hostId: string,
  db: Database = deps.db,
): Promise<Partial<Record<CredentialSlot, Repository>>> {
  const stored = await loadHostCredentials(db, deps.keys.secret, hostId);
  const usable: Partial<Record<CredentialSlot, Repository>> = {};
  for (const slot of ["repo", "admin", "mirror"] as const) {
    const state = stored[slot];
    if (state.state === "bound") {
      usable[slot] = state.credentials;
    } else if (state.state === "unreadable") {
      deps.log.error(
        { host_id: hostId, slot, reason: state.reason },
        "stored credentials cannot be opened with this server's key; the slot is skipped",
      );
    }
  }
  return usable;
}

export type MergeResult = { ok: true; credentials: Repository } | { ok: false; errors: string[] };

export function mergeCredentialPatch(existing: Repository | undefined, patch: CredentialPatch): MergeResult {
  const errors: string[] = [];
  const url = patch.url ?? existing?.url;
  const password = patch.password ?? existing?.password;
  if (patch.url === "") {
    errors.push("url: must not be empty");
  } else if (url === undefined) {
    errors.push("url: required, as no repository URL is stored yet");
  }
  if (patch.password === "") {
    errors.push("password: must not be empty");
  } else if (password === undefined) {
    errors.push("password: required, as no password is stored yet");
  }
  const username = patch.username === undefined ? existing?.username : patch.username;
  // A stored login goes with a username the patch removes; a new one needs a username to be for.
  if (patch.login_password && !username) {
    errors.push("login_password: needs a username, whose login on the repository server it is");
  }
  if (errors.length > 0 || url === undefined || password === undefined) {
    return { ok: false, errors };
  }
  const loginPassword = patch.login_password === undefined ? existing?.login_password : patch.login_password;
  return { ok: true, credentials: repositoryOf(url, password, username, loginPassword) };
}

export type UpdateCredentialsResult =
  | { ok: true; credentials: Repository; pushed: boolean }
  | { ok: false; reason: "host_not_found" }
  | { ok: false; reason: "invalid"; errors: string[] }
  | { ok: false; reason: "agent_too_old"; message: string };

/**
 * Merges `patch` into the host's `slot` and stores it; then pushes `config.update` when the agent
 * is connected (`pushed`). The host row is locked for the read-merge-write, so two concurrent
 * edits of different fields both survive. Stored credentials that no longer open count as absent:
 * the patch must then be complete. A slot with a separate login is refused while an agent too old
 * for it is connected: the edit would otherwise be stored but never reach it.
 */
export async function updateHostCredentials(
  deps: Pick<ServerDeps, "db" | "keys" | "log" | "hub" | "clock" | "ids">,
  audit: AuditContext,
  hostId: string,
  slot: CredentialSlot,
  patch: CredentialPatch,
): Promise<UpdateCredentialsResult> {
  let protocolVersion: number | null = null;
  let keeperHostId: string | null = null;
  const result = await deps.db.transaction(async (tx): Promise<UpdateCredentialsResult> => {
    const [host] = await tx
      .select({ id: hosts.id, protocolVersion: hosts.protocolVersion, keeperHostId: hosts.keeperHostId })
      .from(hosts)
      .where(eq(hosts.id, hostId))
      .for("update");
    if (!host) {
      return { ok: false, reason: "host_not_found" };
    }
    const stored = (await loadHostCredentials(tx, deps.keys.secret, hostId))[slot];
    if (stored.state === "unreadable") {
      deps.log.warn(
        { host_id: hostId, slot, reason: stored.reason },
        "stored credentials cannot be opened; the edit must supply url and password",
      );
    }
    const merged = mergeCredentialPatch(stored.state === "bound" ? stored.credentials : undefined, patch);
    if (!merged.ok) {
      return { ok: false, reason: "invalid", errors: merged.errors };
    }
    const tooOld = loginWithheldReason(merged.credentials, host.protocolVersion);
    if (tooOld !== undefined && deps.hub.isOnline(hostId)) {
      return { ok: false, reason: "agent_too_old", message: tooOld };
    }
    protocolVersion = host.protocolVersion;
    keeperHostId = host.keeperHostId;
    const sealed = sealHostCredentials(deps.keys.secret, hostId, merged.credentials);
    const now = deps.clock.now();
    const column = { [SEALED_COLUMN[slot]]: sealed };
    await tx
      .insert(hostCredentials)
      .values({ hostId, ...column, createdAt: now, updatedAt: now })
      .onConflictDoUpdate({ target: hostCredentials.hostId, set: { ...column, updatedAt: now } });
    await writeAudit(tx, deps, {
      ...audit,
      action: `host.${slot}_credentials.update`,
      targetKind: "host",
      targetId: hostId,
      details: {
        fields: Object.keys(patch).filter((key) => patch[key as keyof CredentialPatch] !== undefined),
      },
    });
    return { ok: true, credentials: merged.credentials, pushed: false };
  });
  if (!result.ok) {
    return result;
  }
  // The mirror slot goes out right before each copy (jobs/dispatch-job.ts), and only to agents
  // that know it: an older one would refuse the frame. An agent that connected since the check,
  // too old for the slot's login, gets nothing: its hello left the slot out, and says why.
  // A protected host never holds the admin slot: its keeper gets it with each job (keepers/).
  const pushed =
    slot !== "mirror" &&
    !(slot === "admin" && keeperHostId !== null) &&
    loginWithheldReason(result.credentials, protocolVersion) === undefined &&
    deps.hub.send(hostId, "config.update", { slot, repository: result.credentials });
  return { ...result, pushed };
}

/** Forgets the host's mirror: no more copies; the mirror repository itself is left as it is. */
export async function removeMirrorCredentials(
  deps: Pick<ServerDeps, "db" | "clock" | "ids">,
  audit: AuditContext,
  hostId: string,
): Promise<boolean> {
  return deps.db.transaction(async (tx) => {
    const removed = await tx
      .update(hostCredentials)
      .set({ mirrorSealed: null, updatedAt: deps.clock.now() })
      .where(and(eq(hostCredentials.hostId, hostId), isNotNull(hostCredentials.mirrorSealed)))
      .returning({ hostId: hostCredentials.hostId });
    if (removed.length > 0) {
      await writeAudit(tx, deps, {
        ...audit,
        action: "host.mirror_credentials.remove",
        targetKind: "host",
        targetId: hostId,
        details: {},
      });
    }
    return removed.length > 0;
  });
}
