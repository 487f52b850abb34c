/**
 * @module agent-channel/agent-socket
 * Adapts one `ws` WebSocket to the hub's AgentConnection, with a gate: until the hello's initial
 * push (credentials, caps, schedule.set) opens it, frames sent through the hub are held back and
 * written after the push in their order. That is how the initial push reaches the agent before any
 * other command (packages/protocol/PROTOCOL.md, "On hello") even when a route dispatches a job
 * while the push is being read from the database. Every frame ends in the one `write` below.
 */
import { WebSocket } from "ws";
import type { AgentConnection } from "../hub/local-hub.js";

export interface AgentSocket extends AgentConnection {
  /** Writes at once, bypassing the gate: only the session's `answer` uses it (error replies). */
  sendNow(frame: string): void;
  /** Writes `first` (the initial push), then the held frames in order, and lets later ones through. */
  openGate(first: readonly string[]): void;
  readonly closed: boolean;
  /** Set once, by whoever closes first; a replaced socket is not the host's socket any more. */
  readonly closeCode: number | undefined;
}

/** Called when a frame could not be written (socket closing); the frame names its type first. */
export type DropHandler = (frame: string, reason: string) => void;

export function createAgentSocket(hostId: string, ws: WebSocket, onDrop: DropHandler): AgentSocket {
  let held: string[] | undefined = [];
  let closeCode: number | undefined;

  const write = (frame: string) => {
    if (ws.readyState !== WebSocket.OPEN) {
      onDrop(frame, "socket is not open");
      return;
    }
    ws.send(frame, (error) => {
      if (error) {
        onDrop(frame, error.message);
      }
    });
  };

  return {
    hostId,
    get closed() {
      return ws.readyState === WebSocket.CLOSING || ws.readyState === WebSocket.CLOSED;
    },
    get closeCode() {
      return closeCode;
    },
    send(frame) {
      if (held) {
        held.push(frame);
      } else {
        write(frame);
      }
    },
    sendNow: write,
    openGate(first) {
      const frames = [...first, ...(held ?? [])];
      held = undefined;
      for (const frame of frames) {
        write(frame);
      }
    },
    close(code, reason) {
      closeCode ??= code;
      held = undefined;
      if (ws.readyState === WebSocket.CONNECTING || ws.readyState === WebSocket.OPEN) {
        ws.close(code, reason);
      }
    },
  };
}
