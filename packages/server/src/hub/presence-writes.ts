/**
 * @module hub/presence-writes
 * A host's presence writes reach the table in the order its sockets came and went, one chain per
 * host. A write that fails marks the host dirty, for the next heartbeat to write again.
 */
import type { Logger } from "../log.js";

export interface PresenceWrites {
  /** Queues a write behind the host's earlier ones. */
  chain(hostId: string, write: () => Promise<void>): void;
  /** Whether a write of this host is queued or running. */
  busy(hostId: string): boolean;
  /** Resolves once the host's writes so far are done (never rejects). */
  settle(hostId: string): Promise<void>;
  /** Resolves once every write so far is done. */
  all(): Promise<void>;
  isDirty(hostId: string): boolean;
  /** Hosts whose last write failed. */
  dirtyHosts(): string[];
  forgetDirty(hostId: string): void;
}

export function createPresenceWrites(log: Logger): PresenceWrites {
  const writes = new Map<string, Promise<void>>();
  const dirty = new Set<string>();
  return {
    chain(hostId, write) {
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
    },
    busy: (hostId) => writes.has(hostId),
    async settle(hostId) {
      await writes.get(hostId);
    },
    async all() {
      await Promise.all([...writes.values()]);
    },
    isDirty: (hostId) => dirty.has(hostId),
    dirtyHosts: () => [...dirty],
    forgetDirty(hostId) {
      dirty.delete(hostId);
    },
  };
}
