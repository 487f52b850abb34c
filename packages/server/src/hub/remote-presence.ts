/**
 * @module hub/remote-presence
 * What a replica knows of the others: which are alive, and which hosts are connected to which.
 * Kept in memory so that `isOnline` and `send` stay synchronous: changed by the presence
 * broadcasts as they happen, and replaced by each heartbeat's reload (which heals a missed one).
 */
import type { PresenceMessage } from "./replica-messages.js";

export interface RemoteHost {
  replica: string;
  connection: string;
}

export interface RemotePresence {
  where(hostId: string): RemoteHost | undefined;
  /** Forgets the host (it connected here, or was disconnected from here). */
  forget(hostId: string): void;
  hostIds(): Iterable<string>;
  hasPeers(): boolean;
  /** Applies one broadcast from another replica (or this one's own, which it ignores). */
  apply(message: PresenceMessage): void;
  /** Replaces what is known with a heartbeat's reload. */
  reload(peers: string[], hosts: Array<{ hostId: string } & RemoteHost>): void;
}

/** `lost` hears of every host that went away, so requests waiting on it fail now, not at timeout. */
export function createRemotePresence(
  replicaId: string,
  lost: (hostId: string, reason: string) => void,
): RemotePresence {
  const remote = new Map<string, RemoteHost>();
  const peers = new Set<string>();
  return {
    where: (hostId) => remote.get(hostId),
    forget(hostId) {
      remote.delete(hostId);
    },
    hostIds: () => remote.keys(),
    hasPeers: () => peers.size > 0,
    apply(message) {
      switch (message.t) {
        case "joined":
          if (message.replica !== replicaId) {
            peers.add(message.replica);
          }
          return;
        case "gone":
          peers.delete(message.replica);
          for (const [hostId, where] of remote) {
            if (where.replica === message.replica) {
              remote.delete(hostId);
              lost(hostId, `host ${hostId} disconnected: its server stopped`);
            }
          }
          return;
        case "up":
          if (message.replica === replicaId) {
            remote.delete(message.host);
          } else {
            remote.set(message.host, { replica: message.replica, connection: message.connection });
          }
          return;
        case "down":
          if (remote.get(message.host)?.connection === message.connection) {
            remote.delete(message.host);
            lost(message.host, `host ${message.host} disconnected`);
          }
      }
    },
    reload(alive, hosts) {
      peers.clear();
      for (const id of alive) {
        peers.add(id);
      }
      const seen = new Set<string>();
      for (const row of hosts) {
        seen.add(row.hostId);
        remote.set(row.hostId, { replica: row.replica, connection: row.connection });
      }
      for (const hostId of [...remote.keys()]) {
        if (!seen.has(hostId)) {
          remote.delete(hostId);
          lost(hostId, `host ${hostId} is no longer connected`);
        }
      }
    },
  };
}
