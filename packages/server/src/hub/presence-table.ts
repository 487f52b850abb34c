/**
 * @module hub/presence-table
 * The cluster hub's statements on `server_replicas` and `host_connections`: which replica holds
 * which host's socket, and which replicas are alive. The hub decides when; these say how.
 */
import { type Database, executeRows, hostConnections, serverReplicas } from "@fleetback/db";
import { and, eq, gt, inArray, lt, ne, type SQL, sql } from "drizzle-orm";

export interface HostHolder {
  replicaId: string;
  connectionId: string;
}

/**
 * Records this replica's socket for the host and marks the host online; returns the holder it
 * replaced (whose older socket the caller evicts), if any.
 *
 * One statement, for every hello pays it: the old holder is read under a row lock (a concurrent
 * hello of the same host waits, then reads the holder that one wrote), the row is written, and a
 * host a closing older socket marked offline meanwhile is online again: the row written here is
 * what makes it so.
 */
export async function recordConnection(
  db: Database,
  replicaId: string,
  hostId: string,
  connectionId: string,
): Promise<HostHolder | undefined> {
  const [old] = await executeRows<{ replica_id: string; connection_id: string }>(
    db,
    sql`with old as (
      select replica_id, connection_id from host_connections where host_id = ${hostId} for update
    ), written as (
      insert into host_connections (host_id, replica_id, connection_id)
      values (${hostId}, ${replicaId}, ${connectionId})
      on conflict (host_id) do update
        set replica_id = excluded.replica_id, connection_id = excluded.connection_id, connected_at = now()
    ), online as (
      update hosts set status = 'online' where id = ${hostId} and status = 'offline'
    )
    select replica_id, connection_id from old`,
  );
  return old ? { replicaId: old.replica_id, connectionId: old.connection_id } : undefined;
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
