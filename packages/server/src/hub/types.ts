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
  /**
   * Receives the frames of one agent stream (a download's `dump.chunk` and `dump.end`, which carry
   * `requestId`) from `hostId` only. Streams run only over a socket held by this process: undefined
   * when the host is not connected here. `closed` is called when that socket goes away first.
   */
  openStream(hostId: string, requestId: string, sink: StreamSink): StreamHandle | undefined;
  /** Closes the host's connection with a protocol close code (e.g. 4003 when the host is deleted). */
  disconnect(hostId: string, code: number, reason: string): void;
  /** Replicas only: live job log lines not sent to the other replicas because the outbox was full. */
  droppedBusMessages?(): number;
}

export interface StreamSink {
  frame(envelope: AgentEnvelope): void;
  closed(reason: string): void;
}

export interface StreamHandle {
  /** Sends a frame to the host of this stream; false when it is gone. */
  send<K extends ServerMessageType>(type: K, payload: PayloadOf<K>): boolean;
  /** Stops receiving: later frames of this request id are dropped. */
  close(): void;
}

export class HubOfflineError extends Error {
  override readonly name = "HubOfflineError";
}

export class HubTimeoutError extends Error {
  override readonly name = "HubTimeoutError";
}
