/**
 * @module hub/local-hub
 * The in-process agent hub: one live connection per host, request/reply correlation by message
 * id, and eviction of an older connection when the same host connects again (last one wins).
 */
import { type AgentEnvelope, encode } from "@fleetback/protocol";
import { createPendingRequests } from "./pending-requests.js";
import { type AgentHub, HubOfflineError, type StreamHandle, type StreamSink } from "./types.js";

/** What the hub needs of a socket; the agent channel adapts a `ws` WebSocket to it. */
export interface AgentConnection {
  readonly hostId: string;
  send(frame: string): void;
  close(code: number, reason: string): void;
}

export interface LocalHub extends AgentHub {
  /** Makes `connection` the host's current one; returns the connection it replaced, if any. */
  register(connection: AgentConnection): AgentConnection | undefined;
  /** Forgets `connection` if it is still current (true) — a replaced one is ignored (false). */
  unregister(connection: AgentConnection): boolean;
  isCurrent(connection: AgentConnection): boolean;
  /** Hands a reply to the caller waiting for its id; false when nobody waits (it is dropped). */
  deliverReply(hostId: string, envelope: AgentEnvelope): boolean;
  /** Hands a stream frame (`dump.chunk`, `dump.end`) to its open stream; false when none is open. */
  deliverStream(hostId: string, requestId: string, envelope: AgentEnvelope): boolean;
  /** Writes an encoded frame (a request another replica made keeps its id); false when offline. */
  sendFrame(hostId: string, frame: string): boolean;
  onlineHostIds(): string[];
  /**
   * Resolves once what the hub records about the host elsewhere (the cluster hub's presence row)
   * is written; at once in process, where there is nothing else to record.
   */
  settle(hostId: string): Promise<void>;
  /**
   * The server is shutting down: sockets closing from now on are not recorded one by one; the
   * cluster hub removes this replica's presence in one statement. Resolves once that is done.
   */
  drain(): Promise<void>;
}

export function createLocalHub(): LocalHub {
  const connections = new Map<string, AgentConnection>();
  const pending = createPendingRequests();
  const streams = new Map<string, { hostId: string; connection: AgentConnection; sink: StreamSink }>();

  // A stream lives on the socket it was opened over; a newer socket of the host does not inherit it.
  function closeStreamsOf(connection: AgentConnection, reason: string): void {
    for (const [id, stream] of streams) {
      if (stream.connection === connection) {
        streams.delete(id);
        stream.sink.closed(reason);
      }
    }
  }

  // Every frame the server sends an agent is written here.
  function write(hostId: string, frame: string): boolean {
    const connection = connections.get(hostId);
    if (!connection) {
      return false;
    }
    connection.send(frame);
    return true;
  }

  return {
    register(connection) {
      const previous = connections.get(connection.hostId);
      connections.set(connection.hostId, connection);
      if (previous !== undefined && previous !== connection) {
        closeStreamsOf(previous, "the agent connected again");
      }
      return previous === connection ? undefined : previous;
    },
    unregister(connection) {
      if (connections.get(connection.hostId) !== connection) {
        return false;
      }
      connections.delete(connection.hostId);
      pending.failHost(connection.hostId, new HubOfflineError(`host ${connection.hostId} disconnected`));
      closeStreamsOf(connection, "the agent disconnected");
      return true;
    },
    isCurrent(connection) {
      return connections.get(connection.hostId) === connection;
    },
    send(hostId, type, payload) {
      return connections.has(hostId) && write(hostId, encode(type, payload));
    },
    sendFrame: write,
    request(hostId, type, payload, replyType, timeoutMs) {
      if (!connections.has(hostId)) {
        return Promise.reject(new HubOfflineError(`host ${hostId} is not connected`));
      }
      const frame = encode(type, payload);
      const reply = pending.wait((JSON.parse(frame) as { id: string }).id, hostId, replyType, timeoutMs);
      write(hostId, frame);
      return reply;
    },
    deliverReply: (hostId, envelope) => pending.settle(hostId, envelope),
    isOnline(hostId) {
      return connections.has(hostId);
    },
    openStream(hostId, requestId, sink): StreamHandle | undefined {
      const connection = connections.get(hostId);
      if (!connection || streams.has(requestId)) {
        return undefined;
      }
      streams.set(requestId, { hostId, connection, sink });
      return {
        send(type, payload) {
          if (streams.get(requestId)?.connection !== connection || connections.get(hostId) !== connection) {
            return false;
          }
          connection.send(encode(type, payload));
          return true;
        },
        close() {
          if (streams.get(requestId)?.connection === connection) {
            streams.delete(requestId);
          }
        },
      };
    },
    deliverStream(hostId, requestId, envelope) {
      const stream = streams.get(requestId);
      if (!stream || stream.hostId !== hostId) {
        return false;
      }
      stream.sink.frame(envelope);
      return true;
    },
    disconnect(hostId, code, reason) {
      const connection = connections.get(hostId);
      if (connection) {
        connections.delete(hostId);
        pending.failHost(hostId, new HubOfflineError(`host ${hostId} disconnected: ${reason}`));
        closeStreamsOf(connection, "the agent was disconnected");
        connection.close(code, reason);
      }
    },
    onlineHostIds() {
      return [...connections.keys()];
    },
    settle: async () => {},
    drain: async () => {},
  };
}
