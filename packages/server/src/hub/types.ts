/**
 * @module hub/types
 * The agent hub is the only code that knows which socket belongs to which host. Everything else
 * talks to agents through this interface, which does not say whether the socket lives in this
 * process: a scaled-out server routes the same calls through PostgreSQL LISTEN/NOTIFY.
 */
import type { AgentEnvelope, AgentMessageType, PayloadOf, ServerMessageType } from "@fleetback/protocol";

export interface AgentHub {
  /** Sends one message; false when the host has no live connection (nothing was sent). */
  send<K extends ServerMessageType>(hostId: string, type: K, payload: PayloadOf<K>): boolean;
  /**
   * Sends a request and resolves with the agent's reply carrying the request's id, or rejects
   * with HubTimeoutError after timeoutMs, or HubOfflineError when the host is not connected.
   */
  request<K extends ServerMessageType, R extends AgentMessageType>(
    hostId: string,
    type: K,
    payload: PayloadOf<K>,
    replyType: R,
    timeoutMs: number,
  ): Promise<AgentEnvelope<R>>;
  isOnline(hostId: string): boolean;
  /** Closes the host's connection with a protocol close code (e.g. 4003 when the host is deleted). */
  disconnect(hostId: string, code: number, reason: string): void;
}

export class HubOfflineError extends Error {
  override readonly name = "HubOfflineError";
}

export class HubTimeoutError extends Error {
  override readonly name = "HubTimeoutError";
}
