/**
 * @module hub/cluster-hub
 * The agent hub of a server that shares its PostgreSQL with other replicas. Each replica owns the
 * sockets connected to it (a local hub inside) and records host → replica in `host_connections`;
 * a message for a host on another replica travels over LISTEN/NOTIFY (cluster-bus.ts) to the
 * replica that holds it, and a request's reply comes back the same way under the caller's timeout.
 *
 * Who is online fleet-wide is kept in memory, so `isOnline` and `send` stay synchronous as the
 * AgentHub port says: presence changes are broadcast as they happen, and every heartbeat reloads
 * the table (a notification missed while the listening session was down heals there). A replica
 * that stops heartbeating is dead: its rows are deleted by the next replica's heartbeat, and its
 * hosts count as offline from then on. The last connection wins across replicas: the replica a
 * host connects to tells the replica holding its older socket to close it.
 */

import type { Database } from "@fleetback/db";
import {
  type AgentEnvelope,
  type AgentMessageType,
  CLOSE_CODES,
  type Clock,
  encode,
  systemClock,
  systemTimers,
  type Timers,
} from "@fleetback/protocol";
import type { Ids } from "../ids.js";
import type { Logger } from "../log.js";
import type { ClusterBus } from "./cluster-bus.js";
import { type AgentConnection, createLocalHub, type LocalHub } from "./local-hub.js";
import { createPendingRequests } from "./pending-requests.js";
import {
  beatReplica,
  holdersOf,
  recordConnection,
  remoteConnections,
  removeConnection,
  removeReplica,
  removeReplicaConnections,
} from "./presence-table.js";
import { createPresenceWrites } from "./presence-writes.js";
import { createRemotePresence } from "./remote-presence.js";
import {
  checkPresenceMessage,
  checkReplicaMessage,
  PRESENCE,
  type ReplicaMessage,
  type ReplicaReplyEnvelope,
  replicaChannel,
} from "./replica-messages.js";
import { HubOfflineError } from "./types.js";

export interface ClusterHubOptions {
  db: Database;
  /** The replica's bus (shared with the cluster job events, one ordered outbox per replica). */
  bus: ClusterBus;
  ids: Pick<Ids, "ulid">;
  log: Logger;
  /** This replica's id: a ULID, unique per process start. */
  replicaId: string;
  /** How often the replica heartbeats and reloads presence (default 5 s). */
  heartbeatMs?: number;
  /** A replica silent this long is dead (default 20 s; keep it a few heartbeats). */
  replicaTtlMs?: number;
  /** Heartbeats and the age of bus messages to prune; the system port unless a test drives them. */
  clock?: Clock;
  timers?: Timers;
}

export interface ClusterHub extends LocalHub {
  readonly replicaId: string;
  /** Resolves once this host's presence writes so far have reached the database. */
  settle(hostId: string): Promise<void>;
  /** One heartbeat now: refresh this replica, expire dead ones, reload presence. */
  heartbeat(): Promise<void>;
  /** Whether another live replica is known: with none, fleet-wide broadcasts have no listener. */
  hasPeers(): boolean;
  /** Live job log lines this replica's bus dropped because its outbox was full. */
  droppedBusMessages(): number;
  /** Stops heartbeating and listening, and removes this replica's rows (its sockets are closed). */
  close(): Promise<void>;
}

export async function createClusterHub(options: ClusterHubOptions): Promise<ClusterHub> {
  const { db, log, replicaId } = options;
  const heartbeatMs = options.heartbeatMs ?? 5_000;
  const ttlMs = options.replicaTtlMs ?? 20_000;
  const clock = options.clock ?? systemClock;
  const timers = options.timers ?? systemTimers;
  const { bus } = options;
  const local = createLocalHub();
  /** This replica's sockets: the connection id recorded for each. */
  const mine = new Map<string, { connection: AgentConnection; connectionId: string }>();
  /** Requests this replica relayed to the replica holding the host. */
  const pending = createPendingRequests();
  /** Hosts connected to other live replicas, and which replicas are alive. */
  const remote = createRemotePresence(replicaId, (hostId, reason) =>
    pending.failHost(hostId, new HubOfflineError(reason)),
  );
  /** Requests other replicas made of hosts connected here: each reply goes back to its asker. */
  const forwarded = createPendingRequests();
  const writes = createPresenceWrites(log);
  let closed = false;

  function toReplica(replica: string, message: ReplicaMessage): void {
    bus.publish(replicaChannel(replica), message);
  }

  /** Records this replica's socket for the host, marks it online, and evicts an older one elsewhere. */
  async function recordUp(hostId: string, connectionId: string): Promise<void> {
    const before = await recordConnection(db, replicaId, hostId, connectionId);
    if (before && before.replicaId !== replicaId) {
      toReplica(before.replicaId, { t: "evict", host: hostId, connection: before.connectionId });
    }
    bus.publish(PRESENCE, { t: "up", host: hostId, replica: replicaId, connection: connectionId });
  }

  async function recordDown(hostId: string, connectionId: string): Promise<void> {
    await removeConnection(db, hostId, connectionId);
    bus.publish(PRESENCE, { t: "down", host: hostId, connection: connectionId });
  }

  /** Relays a request another replica made to the host's socket here, and its outcome back. */
  function relay(message: Extract<ReplicaMessage, { t: "request" }>): void {
    // Its asker keeps its own timeout: one here only forgets the request.
    forwarded.wait(message.id, message.host, message.reply_type as AgentMessageType, message.timeout_ms).then(
      (envelope) =>
        toReplica(message.from, { t: "reply", id: message.id, envelope: envelope as ReplicaReplyEnvelope }),
      (err: unknown) => {
        if (!closed && err instanceof HubOfflineError) {
          toReplica(message.from, { t: "fail", id: message.id, reason: err.message });
        }
      },
    );
    local.sendFrame(message.host, message.frame);
  }

  function forgetLocal(connection: AgentConnection): void {
    const entry = mine.get(connection.hostId);
    if (entry?.connection !== connection) {
      return;
    }
    mine.delete(connection.hostId);
    forwarded.failHost(connection.hostId, new HubOfflineError(`host ${connection.hostId} disconnected`));
    // While draining, drain() removes every row of this replica at once.
    if (!draining) {
      writes.chain(connection.hostId, () => recordDown(connection.hostId, entry.connectionId));
    }
  }

  let draining: Promise<void> | undefined;
  async function removeAllPresence(): Promise<void> {
    await writes.all();
    await removeReplicaConnections(db, replicaId);
    bus.publish(PRESENCE, { t: "gone", replica: replicaId });
    await bus.flush();
  }

  function onReplicaMessage(message: unknown): void {
    if (!checkReplicaMessage.Check(message)) {
      log.warn("malformed message from another replica dropped");
      return;
    }
    switch (message.t) {
      case "send":
        local.sendFrame(message.host, message.frame);
        return;
      case "request": {
        if (!local.isOnline(message.host)) {
          toReplica(message.from, {
            t: "fail",
            id: message.id,
            reason: `host ${message.host} is not connected`,
          });
          return;
        }
        relay(message);
        return;
      }
      case "reply":
        pending.resolveRelayed(message.id, message.envelope as unknown as AgentEnvelope);
        return;
      case "fail":
        pending.fail(message.id, new HubOfflineError(message.reason));
        return;
      case "disconnect":
        hub.disconnect(message.host, message.code, message.reason);
        return;
      case "evict": {
        const entry = mine.get(message.host);
        if (entry?.connectionId === message.connection) {
          entry.connection.close(CLOSE_CODES.replaced, "replaced by a newer connection");
        }
        return;
      }
    }
  }

  function onPresence(message: unknown): void {
    if (!checkPresenceMessage.Check(message)) {
      log.warn("malformed presence message dropped");
      return;
    }
    remote.apply(message);
  }

  let beating: Promise<void> | undefined;
  let queued: Promise<void> | undefined;
  /**
   * One at a time: a slow database must not pile heartbeats up. A call while one is in flight
   * gets the next one (at most one waits): the beat in flight may have read the table before
   * what the caller just changed (a replica's listener resync racing an explicit beat).
   */
  function heartbeat(): Promise<void> {
    if (!beating) {
      beating = beat().finally(() => {
        beating = undefined;
      });
      return beating;
    }
    queued ??= beating
      .catch(() => undefined)
      .then(() => {
        queued = undefined;
        return heartbeat();
      });
    return queued;
  }

  async function beat(): Promise<void> {
    const alive = await beatReplica(db, replicaId, ttlMs);
    // Rows this replica should have and lacks: a failed write, or the replica was taken for dead
    // (a long pause) and its rows went with it. A row of another replica means a newer socket
    // there: ours is stale (its eviction notice was lost) and is closed.
    const ids = [...mine.keys()].filter((hostId) => !writes.busy(hostId));
    const holder = await holdersOf(db, ids);
    for (const hostId of draining ? [] : ids) {
      const entry = mine.get(hostId);
      const at = holder.get(hostId);
      if (!entry || writes.busy(hostId)) {
        continue;
      }
      if (at === undefined || (at === replicaId && writes.isDirty(hostId))) {
        writes.chain(hostId, () => recordUp(hostId, entry.connectionId));
      } else if (at !== replicaId) {
        entry.connection.close(CLOSE_CODES.replaced, "replaced by a newer connection");
      }
    }
    for (const hostId of writes.dirtyHosts()) {
      if (!mine.has(hostId)) {
        writes.forgetDirty(hostId);
      }
    }
    remote.reload(alive, await remoteConnections(db, replicaId, ttlMs));
    await bus.prune(new Date(clock.now().getTime() - 5 * 60_000));
  }

  const hub: ClusterHub = {
    replicaId,
    register(connection) {
      const previous = local.register(connection);
      const connectionId = options.ids.ulid(new Date());
      mine.set(connection.hostId, { connection, connectionId });
      remote.forget(connection.hostId);
      writes.chain(connection.hostId, () => recordUp(connection.hostId, connectionId));
      return previous;
    },
    unregister(connection) {
      forgetLocal(connection);
      return local.unregister(connection);
    },
    isCurrent: (connection) => local.isCurrent(connection),
    sendFrame(hostId, frame) {
      if (local.isOnline(hostId)) {
        return local.sendFrame(hostId, frame);
      }
      const where = remote.where(hostId);
      if (!where) {
        return false;
      }
      toReplica(where.replica, { t: "send", host: hostId, frame });
      return true;
    },
    send(hostId, type, payload) {
      return hub.sendFrame(hostId, encode(type, payload));
    },
    request(hostId, type, payload, replyType, timeoutMs) {
      const where = local.isOnline(hostId) ? undefined : remote.where(hostId);
      if (!where) {
        return local.request(hostId, type, payload, replyType, timeoutMs);
      }
      const frame = encode(type, payload);
      const id = (JSON.parse(frame) as { id: string }).id;
      const reply = pending.wait(id, hostId, replyType, timeoutMs);
      toReplica(where.replica, {
        t: "request",
        host: hostId,
        frame,
        id,
        reply_type: replyType,
        from: replicaId,
        timeout_ms: timeoutMs,
      });
      return reply;
    },
    deliverReply(hostId, envelope) {
      if (local.deliverReply(hostId, envelope)) {
        return true;
      }
      return forwarded.settle(hostId, envelope);
    },
    isOnline: (hostId) => local.isOnline(hostId) || remote.where(hostId) !== undefined,
    // Streams are not relayed between replicas: only a host connected here can be streamed from.
    openStream: (hostId, requestId, sink) => local.openStream(hostId, requestId, sink),
    deliverStream: (hostId, requestId, envelope) => local.deliverStream(hostId, requestId, envelope),
    disconnect(hostId, code, reason) {
      const entry = mine.get(hostId);
      if (entry) {
        forgetLocal(entry.connection);
        local.disconnect(hostId, code, reason);
        return;
      }
      const where = remote.where(hostId);
      if (where) {
        remote.forget(hostId);
        pending.failHost(hostId, new HubOfflineError(`host ${hostId} disconnected: ${reason}`));
        toReplica(where.replica, { t: "disconnect", host: hostId, code, reason });
      }
    },
    onlineHostIds: () => [...new Set([...local.onlineHostIds(), ...remote.hostIds()])],
    settle: (hostId) => writes.settle(hostId),
    heartbeat,
    hasPeers: () => remote.hasPeers(),
    droppedBusMessages: () => bus.dropped(),
    drain() {
      draining ??= removeAllPresence().catch((err: unknown) => {
        log.warn({ err }, "presence not removed at shutdown; it expires with the replica");
      });
      return draining;
    },
    async close() {
      if (closed) {
        return;
      }
      closed = true;
      stopHeartbeat();
      await writes.all();
      await Promise.all(stops.map((stop) => stop().catch(() => undefined)));
      // Sockets still open here are dropped with the process: the others hear of it now, not at expiry.
      for (const [hostId, entry] of mine) {
        bus.publish(PRESENCE, { t: "down", host: hostId, connection: entry.connectionId });
      }
      await bus.flush();
      // The cascade removes this replica's host rows: other replicas see its hosts offline at once.
      await removeReplica(db, replicaId).catch((err: unknown) =>
        log.warn({ err }, "replica row not removed; it expires by heartbeat"),
      );
      pending.failAll(new HubOfflineError("server is shutting down"));
      forwarded.failAll(new HubOfflineError("server is shutting down"));
    },
  };

  await heartbeat();
  const stops = [
    await bus.subscribe(replicaChannel(replicaId), onReplicaMessage),
    await bus.subscribe(PRESENCE, onPresence, () => {
      // After a reconnect of the listening session, presence may have changed unseen.
      if (!closed) {
        heartbeat().catch((err: unknown) => log.warn({ err }, "presence reload after reconnect failed"));
      }
    }),
  ];
  // Replicas already running hear of this one now, not at their next heartbeat: their job events
  // start reaching a browser on this replica at once.
  bus.publish(PRESENCE, { t: "joined", replica: replicaId });
  const stopHeartbeat = timers.every(
    heartbeatMs,
    () => {
      heartbeat().catch((err: unknown) => log.warn({ err }, "replica heartbeat failed"));
    },
    { unref: true },
  );
  return hub;
}
