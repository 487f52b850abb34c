/**
 * @module hub/pending-requests
 * Requests waiting for an agent's reply, by message id: each ends exactly once, by its reply, its
 * timeout, or a failure of its host (or of the whole hub). Both hubs keep theirs here: the local
 * hub for requests written to its own sockets, the cluster hub for those relayed to another replica.
 */
import {
  type AgentEnvelope,
  type AgentMessageType,
  type CancelTimer,
  systemTimers,
  type Timers,
} from "@fleetback/protocol";
import { HubTimeoutError } from "./types.js";

interface Pending {
  hostId: string;
  replyType: string;
  resolve(envelope: AgentEnvelope): void;
  reject(error: Error): void;
  cancelTimeout: CancelTimer;
}

export interface PendingRequests {
  /** Waits for the reply to `id`; rejects with HubTimeoutError after timeoutMs. */
  wait<R extends AgentMessageType>(
    id: string,
    hostId: string,
    replyType: R,
    timeoutMs: number,
  ): Promise<AgentEnvelope<R>>;
  /**
   * Ends the request with this reply when it came from the host asked and is of the type awaited;
   * false when nobody waits for it (it is dropped).
   */
  settle(hostId: string, envelope: AgentEnvelope): boolean;
  /** Ends the request with a reply another replica relayed, which checked its host and type. */
  resolveRelayed(id: string, envelope: AgentEnvelope): void;
  /** Ends one request with an error (another replica said it failed). */
  fail(id: string, error: Error): void;
  /** Ends every request to the host with an error. */
  failHost(hostId: string, error: Error): void;
  /** Ends every request with an error. */
  failAll(error: Error): void;
}

export function createPendingRequests(timers: Timers = systemTimers): PendingRequests {
  const pending = new Map<string, Pending>();

  function end(id: string): Pending | undefined {
    const request = pending.get(id);
    if (request) {
      request.cancelTimeout();
      pending.delete(id);
    }
    return request;
  }

  return {
    wait<R extends AgentMessageType>(id: string, hostId: string, replyType: R, timeoutMs: number) {
      return new Promise<AgentEnvelope<R>>((resolve, reject) => {
        const cancelTimeout = timers.after(timeoutMs, () => {
          pending.delete(id);
          reject(new HubTimeoutError(`no ${replyType} from host ${hostId} within ${timeoutMs} ms`));
        });
        pending.set(id, {
          hostId,
          replyType,
          resolve: (envelope) => resolve(envelope as AgentEnvelope<R>),
          reject,
          cancelTimeout,
        });
      });
    },
    settle(hostId, envelope) {
      const request = pending.get(envelope.id);
      if (!request || request.hostId !== hostId || request.replyType !== envelope.type) {
        return false;
      }
      end(envelope.id)?.resolve(envelope);
      return true;
    },
    resolveRelayed(id, envelope) {
      end(id)?.resolve(envelope);
    },
    fail(id, error) {
      end(id)?.reject(error);
    },
    failHost(hostId, error) {
      for (const [id, request] of pending) {
        if (request.hostId === hostId) {
          end(id)?.reject(error);
        }
      }
    },
    failAll(error) {
      for (const id of [...pending.keys()]) {
        end(id)?.reject(error);
      }
    },
  };
}
