/**
 * @module maintenance/drill-plan
 * What a restore drill of a host needs before it can be sent: an agent that speaks the `drill`
 * kind (DRILL_PROTOCOL_VERSION; an older one would refuse the frame and the job would hang until
 * lost) and a snapshot to drill. The snapshot is the newest one cached for the host, not restic's
 * `latest`, which is the newest of the whole repository and may be another host's; the job then
 * records which snapshot it checked.
 */
import { type Database, hosts, snapshots } from "@fleetback/db";
import { DRILL_PROTOCOL_VERSION } from "@fleetback/protocol";
import { and, desc, eq } from "drizzle-orm";

export interface DrillTarget {
  snapshotId: string;
  sampleFiles: number;
}

export type DrillRefusal = "agent_too_old" | "no_snapshot";

export type DrillPlanResult =
  | { ok: true; drill: DrillTarget }
  | { ok: false; reason: DrillRefusal; message: string };

/** The agent's protocol (null before its first hello) is new enough for drills. */
export function speaksDrill(protocolVersion: number | null): boolean {
  return (protocolVersion ?? 0) >= DRILL_PROTOCOL_VERSION;
}

export function agentTooOldMessage(protocolVersion: number | null): string {
  return `restore drills need an agent of protocol ${DRILL_PROTOCOL_VERSION} or later; this host's agent speaks ${protocolVersion ?? "an unknown protocol"}: update the agent`;
}

export async function drillPlanOf(
  db: Database,
  hostId: string,
  sampleFiles: number,
): Promise<DrillPlanResult> {
  const [host] = await db
    .select({ protocolVersion: hosts.protocolVersion })
    .from(hosts)
    .where(eq(hosts.id, hostId));
  const protocolVersion = host?.protocolVersion ?? null;
  if (!speaksDrill(protocolVersion)) {
    return { ok: false, reason: "agent_too_old", message: agentTooOldMessage(protocolVersion) };
  }
  const [newest] = await db
    .select({ id: snapshots.id })
    .from(snapshots)
    // Drills prove the host's own backups, not another machine's in a shared repository.
    .where(and(eq(snapshots.hostId, hostId), eq(snapshots.isOwn, true)))
    .orderBy(desc(snapshots.time), desc(snapshots.id))
    .limit(1);
  if (!newest) {
    return {
      ok: false,
      reason: "no_snapshot",
      message: "the host has no snapshot to drill yet; run a backup first",
    };
  }
  return { ok: true, drill: { snapshotId: newest.id, sampleFiles } };
}
