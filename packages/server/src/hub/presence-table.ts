/**
 * @module hub/presence-table
 * The cluster hub's statements on `server_replicas` and `host_connections`: which replica holds
 * which host's socket, and which replicas are alive. The hub decides when; these say how.
 */
import { type Database, hostConnections, hosts, serverReplicas } from "@fleetback/db";
import { and, eq, gt, inArray, lt, ne, type SQL, sql } from "drizzle-orm";

export interface HostHolder {
  replicaId: string;
  connectionId: string;
}

/**
 * Records this replica's socket for the host and marks the host online; returns the holder it
 * replaced (whose older socket the caller evicts), if any.
 */
export async function recordConnection(
  db: Database,
  replicaId: string,
  hostId: string,
  connectionId: string,
): Promise<HostHolder | undefined> {
  return db.transaction(async (tx) => {
    const [old] = await tx
      .select({ replicaId: hostConnections.replicaId, connectionId: hostConnections.connectionId })
      .from(hostConnections)
      .where(eq(hostConnections.hostId, hostId))
      .for("update");
    await tx
      .insert(hostConnections)
      .values({ hostId, replicaId, connectionId })
      .onConflictDoUpdate({
        target: hostConnections.hostId,
        set: { replicaId, connectionId, connectedAt: sql`now()` },
      });
    // A replica whose older socket closed just now may have marked the host offline after this
    // one's hello marked it online: the row written here is what makes the host online again.
    await tx
      .update(hosts)
      .set({ status: "online" })
      .where(and(eq(hosts.id, hostId), eq(hosts.status, "offline")));
    return old;
  });
}

/** Removes the host's row if it is still this connection's (a newer one elsewhere stays). */
export async function removeConnection(db: Database, hostId: string, connectionId: string): Promise<void> {
  await db
    .delete(hostConnections)
    .where(and(eq(hostConnections.hostId, hostId), eq(hostConnections.connectionId, connectionId)));
}

export async function removeReplicaConnections(db: Database, replicaId: string): Promise<void> {
  await db.delete(hostConnections).where(eq(hostConnections.replicaId, replicaId));
}

/** The cascade removes the replica's host rows: other replicas see its hosts offline at once. */
export async function removeReplica(db: Database, replicaId: string): Promise<void> {
  await db.delete(serverReplicas).where(eq(serverReplicas.id, replicaId));
}

function aliveSince(ttlMs: number): SQL {
  return sql`now() - ${`${ttlMs} milliseconds`}::interval`;
}

/**
 * Refreshes this replica's heartbeat, expires replicas silent for ttlMs (any replica may; the
 * cascade takes their host rows along) and returns the ids of the other live ones.
 */
export async function beatReplica(db: Database, replicaId: string, ttlMs: number): Promise<string[]> {
  await db
    .insert(serverReplicas)
    .values({ id: replicaId })
    .onConflictDoUpdate({ target: serverReplicas.id, set: { heartbeatAt: sql`now()` } });
  const cutoff = aliveSince(ttlMs);
  await db.delete(serverReplicas).where(lt(serverReplicas.heartbeatAt, cutoff));
  const alive = await db
    .select({ id: serverReplicas.id })
    .from(serverReplicas)
    .where(and(ne(serverReplicas.id, replicaId), gt(serverReplicas.heartbeatAt, cutoff)));
  return alive.map((row) => row.id);
}

/** Which replica holds each of these hosts now (hosts with no row are absent). */
export async function holdersOf(db: Database, hostIds: string[]): Promise<Map<string, string>> {
  if (hostIds.length === 0) {
    return new Map();
  }
  const rows = await db
    .select({ hostId: hostConnections.hostId, replica: hostConnections.replicaId })
    .from(hostConnections)
    .where(inArray(hostConnections.hostId, hostIds));
  return new Map(rows.map((row) => [row.hostId, row.replica]));
}

/** Every host connected to another live replica, with where. */
export async function remoteConnections(
  db: Database,
  replicaId: string,
  ttlMs: number,
): Promise<Array<{ hostId: string; replica: string; connection: string }>> {
  return db
    .select({
      hostId: hostConnections.hostId,
      replica: hostConnections.replicaId,
      connection: hostConnections.connectionId,
    })
    .from(hostConnections)
    .innerJoin(serverReplicas, eq(serverReplicas.id, hostConnections.replicaId))
    .where(and(ne(hostConnections.replicaId, replicaId), gt(serverReplicas.heartbeatAt, aliveSince(ttlMs))));
}
