/**
 * @module jobs/owner-command
 * What a backup or a policy forget carries of the host's snapshot identity (snapshot-owner.ts),
 * added at dispatch so that every way of starting one (run now, schedules, retries, maintenance,
 * the mirror's upkeep) says it: a backup is made under the host's restic_host (`host`), a policy
 * forget looks only at snapshots under the host's snapshot hostnames (`hosts`). An agent older
 * than SNAPSHOT_OWNER_PROTOCOL_VERSION ignores both; it still backs up as before, but a policy
 * forget would apply the host's retention to every machine's snapshots with the tag, so it is
 * refused while the repository holds any other machine's snapshot.
 */
import { type Database, hosts } from "@fleetback/db";
import { type CommandRun, SNAPSHOT_OWNER_PROTOCOL_VERSION } from "@fleetback/protocol";
import { eq } from "drizzle-orm";

export type OwnedCommand =
  | { ok: true; command: CommandRun }
  | { ok: false; reason: "shared_repository_old_agent" };

export function sharedRepositoryOldAgentMessage(protocolVersion: number | null): string {
  return `the repository holds other machines' snapshots, and this host's agent (protocol ${protocolVersion ?? "unknown"}) cannot keep its retention to its own: update the agent to protocol ${SNAPSHOT_OWNER_PROTOCOL_VERSION} or later; nothing was forgotten`;
}

export async function withSnapshotOwner(
  db: Database,
  hostId: string,
  command: CommandRun,
): Promise<OwnedCommand> {
  const policyForget = command.kind === "forget" && command.snapshot_ids === undefined;
  if (command.kind !== "backup" && !policyForget) {
    return { ok: true, command };
  }
  const [host] = await db
    .select({
      resticHost: hosts.resticHost,
      names: hosts.snapshotHostnames,
      protocolVersion: hosts.protocolVersion,
      otherSnapshotCount: hosts.otherSnapshotCount,
    })
    .from(hosts)
    .where(eq(hosts.id, hostId));
  if (host === undefined) {
    return { ok: true, command };
  }
  if ((host.protocolVersion ?? 0) < SNAPSHOT_OWNER_PROTOCOL_VERSION) {
    return policyForget && host.otherSnapshotCount > 0
      ? { ok: false, reason: "shared_repository_old_agent" }
      : { ok: true, command };
  }
  if (command.kind === "backup") {
    return { ok: true, command: { ...command, host: host.resticHost } };
  }
  const names = host.names.includes(host.resticHost) ? host.names : [host.resticHost, ...host.names];
  return { ok: true, command: { ...command, hosts: names } };
}
