/**
 * @module restore/restore-source
 * Where a restore reads from when it is not the restoring host's own repository (issue 38): a
 * snapshot of host A restored onto host B. B's agent is handed A's `repo` credential for that one
 * job (protocol 14, a `kept` restore; jobs/start-job.ts pushes it ahead of the command), never
 * A's admin credential, and forgets it when the job ends.
 *
 * Who may: the operator who may restore onto B. What is refused, by field:
 * - an unknown `from_host_id`, or a host without a repository credential;
 * - B's agent older than protocol 14 (it would refuse the job on arrival);
 * - B protected (it never holds delete authority: keepers/) while A is not: only a protected
 *   host's repository credential is known to be append-and-read, an unprotected host's may be the
 *   one login that also deletes.
 */
import { type Database, type Host, hosts } from "@fleetback/db";
import { CROSS_HOST_RESTORE_PROTOCOL_VERSION, type Repository } from "@fleetback/protocol";
import { eq } from "drizzle-orm";
import type { ServerDeps } from "../deps.js";
import { readHostCredentials } from "../hosts/credentials.js";
import type { FieldProblem } from "../http/validate.js";

export const FROM_HOST_FIELD = "from_host_id";

/** The other host a restore reads from, with what its agent-to-be is given for the job. */
export interface RestoreSource {
  id: string;
  name: string;
  agentDirs: Host["agentDirs"];
  protocolVersion: Host["protocolVersion"];
  /** A's `repo` slot: pushed to B for the job alone, never stored with it. */
  repository: Repository;
  /** "restore of A's snapshot onto B", as the audit entry and the alert say it. */
  summary: string;
}

export function crossHostSummary(fromName: string, ontoName: string): string {
  return `restore of ${fromName}'s snapshot onto ${ontoName}`;
}

type TargetHost = Pick<Host, "id" | "name" | "protocolVersion" | "keeperHostId">;

async function hostById(db: Database, id: string): Promise<Host | undefined> {
  const [row] = await db.select().from(hosts).where(eq(hosts.id, id)).limit(1);
  return row;
}

/**
 * The source of a restore onto `target` from `fromHostId`'s snapshots. Undefined `source` when
 * the restore reads the target's own repository (no other host named, or the target itself).
 */
export async function resolveRestoreSource(
  deps: Pick<ServerDeps, "db" | "keys" | "log">,
  target: TargetHost,
  fromHostId: string | undefined,
): Promise<{ ok: true; source: RestoreSource | undefined } | { ok: false; problem: FieldProblem }> {
  const id = fromHostId?.trim() ?? "";
  if (id === "" || id === target.id) {
    return { ok: true, source: undefined };
  }
  const problem = (message: string) => ({ ok: false, problem: { field: FROM_HOST_FIELD, message } }) as const;
  const from = await hostById(deps.db, id);
  if (from === undefined) {
    return problem(`${id} is not a host`);
  }
  if ((target.protocolVersion ?? 0) < CROSS_HOST_RESTORE_PROTOCOL_VERSION) {
    return problem(
      `${target.name}'s agent (protocol ${target.protocolVersion ?? "unknown"}) cannot restore another host's snapshot: update it to protocol ${CROSS_HOST_RESTORE_PROTOCOL_VERSION} or later`,
    );
  }
  if (target.keeperHostId !== null && from.keeperHostId === null) {
    return problem(
      `${target.name} is protected and never holds delete authority, and ${from.name}'s repository credential may carry it (${from.name} has no keeper): restore onto an unprotected host, or protect ${from.name} first`,
    );
  }
  const repository = (await readHostCredentials(deps, from.id)).repo;
  if (repository === undefined) {
    return problem(`${from.name} has no repository credentials to read its snapshots with`);
  }
  return {
    ok: true,
    source: {
      id: from.id,
      name: from.name,
      agentDirs: from.agentDirs,
      protocolVersion: from.protocolVersion,
      repository,
      summary: crossHostSummary(from.name, target.name),
    },
  };
}
