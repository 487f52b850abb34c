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

import { type Database, hostConnections, hosts, serverReplicas } from "@fleetback/db";
import {
  type AgentEnvelope,
  type AgentMessageType,
  CLOSE_CODES,
  encode,
  type PayloadOf,
  type ServerMessageType,
} from "@fleetback/protocol";
import { and, eq, gt, inArray, lt, ne, sql } from "drizzle-orm";
import { type Static, Type } from "typebox";
import { Compile } from "typebox/compile";
import type { Ids } from "../ids.js";
import type { Logger } from "../log.js";
import type { ClusterBus } from "./cluster-bus.js";
import { type AgentConnection, createLocalHub, type LocalHub } from "./local-hub.js";
import { HubOfflineError, HubTimeoutError } from "./types.js";

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

const Text = Type.String({ minLength: 1, maxLength: 200 });
const ReplicaMessage = Type.Union([
  Type.Object({ t: Type.Literal("send"), host: Text, frame: Type.String() }),
  Type.Object({
    t: Type.Literal("request"),
    host: Text,
    frame: Type.String(),
    id: Text,
    reply_type: Text,
    from: Text,
    timeout_ms: Type.Integer({ minimum: 1, maximum: 600_000 }),
  }),
  Type.Object({ t: Type.Literal("reply"), id: Text, envelope: Type.Object({ id: Text, type: Text }) }),
  Type.Object({ t: Type.Literal("fail"), id: Text, reason: Type.String({ maxLength: 500 }) }),
  Type.Object({
    t: Type.Literal("disconnect"),
    host: Text,
    code: Type.Integer({ minimum: 1000, maximum: 4999 }),
    reason: Type.String({ maxLength: 123 }),
  }),
  Type.Object({ t: Type.Literal("evict"), host: Text, connection: Text }),
]);
const PresenceMessage = Type.Union([
  Type.Object({ t: Type.Literal("up"), host: Text, replica: Text, connection: Text }),
  Type.Object({ t: Type.Literal("down"), host: Text, connection: Text }),
  Type.Object({ t: Type.Literal("gone"), replica: Text }),
  Type.Object({ t: Type.Literal("joined"), replica: Text }),
]);
const checkReplicaMessage = Compile(ReplicaMessage);
const checkPresenceMessage = Compile(PresenceMessage);
type ReplicaMessage = Static<typeof ReplicaMessage>;

const PRESENCE = "presence";

/** The channel a replica listens on for messages addressed to it. */
export function replicaChannel(replicaId: string): string {
  return `hub_${replicaId.toLowerCase()}`;
}

interface RemotePending {
  hostId: string;
  resolve(envelope: AgentEnvelope): void;
  reject(error: Error): void;
  timer: ReturnType<typeof setTimeout>;
}

/** A request another replica made of a host connected here: the reply goes back to `from`. */
interface Forwarded {
  from: string;
  hostId: string;
  replyType: string;
  timer: ReturnType<typeof setTimeout>;
}

export async function createClusterHub(options: ClusterHubOptions): Promise<ClusterHub> {
  const { db, log, replicaId } = options;
  const heartbeatMs = options.heartbeatMs ?? 5_000;
  const ttlMs = options.replicaTtlMs ?? 20_000;
  const { bus } = options;
  const local = createLocalHub();
  /** This replica's sockets: the connection id recorded for each. */
  const mine = new Map<string, { connection: AgentConnection; connectionId: string }>();
  /** Hosts connected to other live replicas. */
  const remote = new Map<string, { replica: string; connection: string }>();
  /** Other live replicas: from heartbeats, and at once from their joined/gone broadcasts. */
  const peers = new Set<string>();
  const pending = new Map<string, RemotePending>();
  const forwarded = new Map<string, Forwarded>();
  /** Per host, the chain of its presence writes, so they reach the table in order. */
  const writes = new Map<string, Promise<void>>();
  /** Hosts whose last presence write failed: retried by the heartbeat. */
  const dirty = new Set<string>();
  let closed = false;

  function toReplica(replica: string, message: ReplicaMessage): void {
    bus.publish(replicaChannel(replica), message);
  }

  function chain(hostId: string, write: () => Promise<void>): void {
    const previous = writes.get(hostId) ?? Promise.resolve();
    const next = previous.then(write).then(
      () => {
        dirty.delete(hostId);
      },
      (err: unknown) => {
        dirty.add(hostId);
        log.warn({ err, host_id: hostId }, "host presence not recorded; retried on the next heartbeat");
      },
    );
    writes.set(hostId, next);
    void next.finally(() => {
      if (writes.get(hostId) === next) {
        writes.delete(hostId);
      }
    });
  }

  /** Records this replica's socket for the host, marks it online, and evicts an older one elsewhere. */
  async function recordUp(hostId: string, connectionId: string): Promise<void> {
    const before = await db.transaction(async (tx) => {
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
    if (before && before.replicaId !== replicaId) {
      toReplica(before.replicaId, { t: "evict", host: hostId, connection: before.connectionId });
    }
    bus.publish(PRESENCE, { t: "up", host: hostId, replica: replicaId, connection: connectionId });
  }

  async function recordDown(hostId: string, connectionId: string): Promise<void> {
    await db
      .delete(hostConnections)
      .where(and(eq(hostConnections.hostId, hostId), eq(hostConnections.connectionId, connectionId)));
    bus.publish(PRESENCE, { t: "down", host: hostId, connection: connectionId });
  }

  function failRemotePending(hostId: string, reason: string): void {
    for (const [id, request] of pending) {
      if (request.hostId === hostId) {
        clearTimeout(request.timer);
        pending.delete(id);
        request.reject(new HubOfflineError(reason));
      }
    }
  }

  function failForwarded(hostId: string, reason: string): void {
    for (const [id, request] of forwarded) {
      if (request.hostId === hostId) {
        clearTimeout(request.timer);
        forwarded.delete(id);
        toReplica(request.from, { t: "fail", id, reason });
      }
    }
  }

  function forgetLocal(connection: AgentConnection): void {
    const entry = mine.get(connection.hostId);
    if (entry?.connection !== connection) {
      return;
    }
    mine.delete(connection.hostId);
    failForwarded(connection.hostId, `host ${connection.hostId} disconnected`);
    // While draining, drain() removes every row of this replica at once.
    if (!draining) {
      chain(connection.hostId, () => recordDown(connection.hostId, entry.connectionId));
    }
  }

  let draining: Promise<void> | undefined;
  async function removeAllPresence(): Promise<void> {
    await Promise.all([...writes.values()]);
    await db.delete(hostConnections).where(eq(hostConnections.replicaId, replicaId));
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
        const timer = setTimeout(() => forwarded.delete(message.id), message.timeout_ms);
        forwarded.set(message.id, {
          from: message.from,
          hostId: message.host,
          replyType: message.reply_type,
          timer,
        });
        local.sendFrame(message.host, message.frame);
        return;
      }
      case "reply": {
        const request = pending.get(message.id);
        if (request) {
          clearTimeout(request.timer);
          pending.delete(message.id);
          request.resolve(message.envelope as unknown as AgentEnvelope);
        }
        return;
      }
      case "fail": {
        const request = pending.get(message.id);
        if (request) {
          clearTimeout(request.timer);
          pending.delete(message.id);
          request.reject(new HubOfflineError(message.reason));
        }
        return;
      }
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
    if (message.t === "joined") {
      if (message.replica !== replicaId) {
        peers.add(message.replica);
      }
      return;
    }
    if (message.t === "gone") {
      peers.delete(message.replica);
      for (const [hostId, where] of remote) {
        if (where.replica === message.replica) {
          remote.delete(hostId);
          failRemotePending(hostId, `host ${hostId} disconnected: its server stopped`);
        }
      }
      return;
    }
    if (message.t === "up") {
      if (message.replica === replicaId) {
        remote.delete(message.host);
      } else {
        remote.set(message.host, { replica: message.replica, connection: message.connection });
      }
      return;
    }
    if (remote.get(message.host)?.connection === message.connection) {
      remote.delete(message.host);
      failRemotePending(message.host, `host ${message.host} disconnected`);
    }
  }

  let beating: Promise<void> | undefined;
  /** One at a time: a slow database must not pile heartbeats up. */
  function heartbeat(): Promise<void> {
    beating ??= beat().finally(() => {
      beating = undefined;
    });
    return beating;
  }

  async function beat(): Promise<void> {
    await db
      .insert(serverReplicas)
      .values({ id: replicaId })
      .onConflictDoUpdate({ target: serverReplicas.id, set: { heartbeatAt: sql`now()` } });
    const cutoff = sql`now() - ${`${ttlMs} milliseconds`}::interval`;
    // Any replica may expire a dead one; the cascade takes its host rows along.
    await db.delete(serverReplicas).where(lt(serverReplicas.heartbeatAt, cutoff));
    const alive = await db
      .select({ id: serverReplicas.id })
      .from(serverReplicas)
      .where(and(ne(serverReplicas.id, replicaId), gt(serverReplicas.heartbeatAt, cutoff)));
    peers.clear();
    for (const row of alive) {
      peers.add(row.id);
    }
    // Rows this replica should have and lacks: a failed write, or the replica was taken for dead
    // (a long pause) and its rows went with it. A row of another replica means a newer socket
    // there: ours is stale (its eviction notice was lost) and is closed.
    const ids = [...mine.keys()].filter((hostId) => !writes.has(hostId));
    const recorded =
      ids.length === 0
        ? []
        : await db
            .select({ hostId: hostConnections.hostId, replica: hostConnections.replicaId })
            .from(hostConnections)
            .where(inArray(hostConnections.hostId, ids));
    const holder = new Map(recorded.map((row) => [row.hostId, row.replica]));
    for (const hostId of draining ? [] : ids) {
      const entry = mine.get(hostId);
      const at = holder.get(hostId);
      if (!entry || writes.has(hostId)) {
        continue;
      }
      if (at === undefined || (at === replicaId && dirty.has(hostId))) {
        chain(hostId, () => recordUp(hostId, entry.connectionId));
      } else if (at !== replicaId) {
        entry.connection.close(CLOSE_CODES.replaced, "replaced by a newer connection");
      }
    }
    for (const hostId of [...dirty]) {
      if (!mine.has(hostId)) {
        dirty.delete(hostId);
      }
    }
    const rows = await db
      .select({
        hostId: hostConnections.hostId,
        replica: hostConnections.replicaId,
        connection: hostConnections.connectionId,
      })
      .from(hostConnections)
      .innerJoin(serverReplicas, eq(serverReplicas.id, hostConnections.replicaId))
      .where(and(ne(hostConnections.replicaId, replicaId), gt(serverReplicas.heartbeatAt, cutoff)));
    const seen = new Set<string>();
    for (const row of rows) {
      seen.add(row.hostId);
      remote.set(row.hostId, { replica: row.replica, connection: row.connection });
    }
    for (const hostId of [...remote.keys()]) {
      if (!seen.has(hostId)) {
        remote.delete(hostId);
        failRemotePending(hostId, `host ${hostId} is no longer connected`);
      }
    }
    await bus.prune(new Date(Date.now() - 5 * 60_000));
  }

  const hub: ClusterHub = {
    replicaId,
    register(connection) {
      const previous = local.register(connection);
      const connectionId = options.ids.ulid(new Date());
      mine.set(connection.hostId, { connection, connectionId });
      remote.delete(connection.hostId);
      chain(connection.hostId, () => recordUp(connection.hostId, connectionId));
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
      const where = remote.get(hostId);
      if (!where) {
        return false;
      }
      toReplica(where.replica, { t: "send", host: hostId, frame });
      return true;
    },
    send(hostId, type, payload) {
      return hub.sendFrame(hostId, encode(type, payload));
    },
    request<K extends ServerMessageType, R extends AgentMessageType>(
      hostId: string,
      type: K,
      payload: PayloadOf<K>,
      replyType: R,
      timeoutMs: number,
    ): Promise<AgentEnvelope<R>> {
      const where = local.isOnline(hostId) ? undefined : remote.get(hostId);
      if (!where) {
        return local.request(hostId, type, payload, replyType, timeoutMs);
      }
      const frame = encode(type, payload);
      const id = (JSON.parse(frame) as { id: string }).id;
      return new Promise<AgentEnvelope<R>>((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new HubTimeoutError(`no ${replyType} from host ${hostId} within ${timeoutMs} ms`));
        }, timeoutMs);
        pending.set(id, {
          hostId,
          resolve: (envelope) => resolve(envelope as AgentEnvelope<R>),
          reject,
          timer,
        });
        toReplica(where.replica, {
          t: "request",
          host: hostId,
          frame,
          id,
          reply_type: replyType,
          from: replicaId,
          timeout_ms: timeoutMs,
        });
      });
    },
    deliverReply(hostId, envelope) {
      if (local.deliverReply(hostId, envelope)) {
        return true;
      }
      const request = forwarded.get(envelope.id);
      if (!request || request.hostId !== hostId || request.replyType !== envelope.type) {
        return false;
      }
      clearTimeout(request.timer);
      forwarded.delete(envelope.id);
      toReplica(request.from, { t: "reply", id: envelope.id, envelope: envelope as ReplicaReplyEnvelope });
      return true;
    },
    isOnline: (hostId) => local.isOnline(hostId) || remote.has(hostId),
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
      const where = remote.get(hostId);
      if (where) {
        remote.delete(hostId);
        failRemotePending(hostId, `host ${hostId} disconnected: ${reason}`);
        toReplica(where.replica, { t: "disconnect", host: hostId, code, reason });
      }
    },
    onlineHostIds: () => [...new Set([...local.onlineHostIds(), ...remote.keys()])],
    async settle(hostId) {
      await writes.get(hostId);
    },
    heartbeat,
    hasPeers: () => peers.size > 0,
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
      clearInterval(ticker);
      await Promise.all([...writes.values()]);
      await Promise.all(stops.map((stop) => stop().catch(() => undefined)));
      // Sockets still open here are dropped with the process: the others hear of it now, not at expiry.
      for (const [hostId, entry] of mine) {
        bus.publish(PRESENCE, { t: "down", host: hostId, connection: entry.connectionId });
      }
      await bus.flush();
      // The cascade removes this replica's host rows: other replicas see its hosts offline at once.
      await db
        .delete(serverReplicas)
        .where(eq(serverReplicas.id, replicaId))
        .catch((err: unknown) => log.warn({ err }, "replica row not removed; it expires by heartbeat"));
      for (const request of pending.values()) {
        clearTimeout(request.timer);
        request.reject(new HubOfflineError("server is shutting down"));
      }
      pending.clear();
      for (const request of forwarded.values()) {
        clearTimeout(request.timer);
      }
      forwarded.clear();
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
  const ticker = setInterval(() => {
    heartbeat().catch((err: unknown) => log.warn({ err }, "replica heartbeat failed"));
  }, heartbeatMs);
  ticker.unref();
  return hub;
}

type ReplicaReplyEnvelope = { id: string; type: string };
