/**
 * @module recovery/recovery-kit
 * What it takes to reach a host's backups on the day Fleetback is gone: per repository slot its
 * URL, the credentials, the URL with the login merged in exactly as the agent merges it, and a
 * script that runs the real restic on it (recovery/kit-script.ts). The kit is built on request and
 * handed to an admin who just stepped up (auth/step-up.ts); it is never stored, logged or audited
 * with its values: the audit entry names the hosts only.
 */
import { type Database, type Host, hosts } from "@fleetback/db";
import { asc } from "drizzle-orm";
import type { AppDeps } from "../app-deps.js";
import type { AuditContext } from "../audit/audit.js";
import { writeAudit } from "../audit/audit.js";
import { type CredentialSlot, loadHostCredentials, type Repository } from "../hosts/credentials.js";
import { requireHost } from "../hosts/require-host.js";
import { kitScript, resticUrl } from "./kit-script.js";

export type KitScope = { kind: "host"; hostId: string } | { kind: "fleet" };

export const SLOT_LABELS: Record<CredentialSlot, string> = {
  repo: "Backup repository (the host's own backups, its everyday key)",
  admin: "Admin / maintenance key (same backups; the key that may forget and prune)",
  mirror: "Mirror repository (a second copy of the backups elsewhere)",
};

export type KitSlot =
  | {
      slot: CredentialSlot;
      label: string;
      state: "bound";
      url: string;
      /** The URL restic is given: the server login merged in as the agent does. */
      restic_repository: string;
      password: string;
      username: string | null;
      login_password: string | null;
      script: string;
    }
  | { slot: CredentialSlot; label: string; state: "unreadable"; reason: string };

export interface KitHost {
  id: string;
  name: string;
  /** The `--host` its backups are made under. */
  restic_host: string;
  /** Every hostname its snapshots may carry (older history, renames). */
  snapshot_hostnames: string[];
  /** What its agent last reported; null when restic is missing or never reported. */
  restic_version: string | null;
  repositories: KitSlot[];
}

export interface RecoveryKit {
  scope: "host" | "fleet";
  generated_at: string;
  server_url: string;
  hosts: KitHost[];
}

async function kitHost(deps: Pick<AppDeps, "db" | "keys">, db: Database, host: Host): Promise<KitHost> {
  const stored = await loadHostCredentials(db, deps.keys.secret, host.id);
  const repositories: KitSlot[] = [];
  for (const slot of ["repo", "admin", "mirror"] as const) {
    const state = stored[slot];
    const label = SLOT_LABELS[slot];
    if (state.state === "unreadable") {
      // The reason names the failure (wrong key, bad record), never the sealed content.
      repositories.push({ slot, label, state: "unreadable", reason: state.reason });
    } else if (state.state === "bound") {
      repositories.push(boundSlot(host, slot, label, state.credentials));
    }
  }
  return {
    id: host.id,
    name: host.name,
    restic_host: host.resticHost,
    snapshot_hostnames: host.snapshotHostnames.length > 0 ? host.snapshotHostnames : [host.resticHost],
    restic_version: host.toolVersion === "" ? null : host.toolVersion,
    repositories,
  };
}

function boundSlot(host: Host, slot: CredentialSlot, label: string, credentials: Repository): KitSlot {
  const restic_repository = resticUrl(credentials);
  return {
    slot,
    label,
    state: "bound",
    url: credentials.url,
    restic_repository,
    password: credentials.password,
    username: credentials.username ?? null,
    login_password: credentials.username ? (credentials.login_password ?? null) : null,
    script: kitScript({
      hostName: host.name,
      slot,
      repository: restic_repository,
      password: credentials.password,
    }),
  };
}

/** Builds the kit and audits its export (host ids and scope, never a value) in one transaction. */
export async function exportRecoveryKit(
  deps: Pick<AppDeps, "db" | "keys" | "clock" | "ids" | "config">,
  audit: AuditContext,
  scope: KitScope,
): Promise<RecoveryKit> {
  return deps.db.transaction(async (tx) => {
    const chosen =
      scope.kind === "host"
        ? [await requireHost(tx, scope.hostId)]
        : await tx.select().from(hosts).orderBy(asc(hosts.name), asc(hosts.id));
    const kitHosts: KitHost[] = [];
    for (const host of chosen) {
      kitHosts.push(await kitHost(deps, tx, host));
    }
    await writeAudit(tx, deps, {
      ...audit,
      action: "recovery_kit.export",
      targetKind: scope.kind === "host" ? "host" : "fleet",
      ...(scope.kind === "host" ? { targetId: scope.hostId } : {}),
      details: { scope: scope.kind, host_ids: kitHosts.map((host) => host.id) },
    });
    return {
      scope: scope.kind,
      generated_at: deps.clock.now().toISOString(),
      server_url: deps.config.baseUrl,
      hosts: kitHosts,
    };
  });
}

/** A refused export (wrong password, stale single sign-on, API token): who tried and what for. */
export async function auditRefusedExport(
  deps: Pick<AppDeps, "db" | "clock" | "ids">,
  audit: AuditContext,
  scope: KitScope,
  reason: string,
): Promise<void> {
  await writeAudit(deps.db, deps, {
    ...audit,
    action: "recovery_kit.export_refused",
    targetKind: scope.kind === "host" ? "host" : "fleet",
    ...(scope.kind === "host" ? { targetId: scope.hostId } : {}),
    details: { scope: scope.kind, reason },
  });
}
