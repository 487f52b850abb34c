/**
 * @module testing/recording-connection
 * An AgentConnection that records what the hub sends it: for tests of domain functions that push
 * to an agent, without a socket.
 */
import { decodeServerMessage, type ServerEnvelope } from "@fleetback/protocol";
import type { AgentConnection } from "../hub/local-hub.js";

export interface RecordingConnection extends AgentConnection {
  frames: ServerEnvelope[];
  closedWith: Array<{ code: number; reason: string }>;
}

export function createRecordingConnection(hostId: string): RecordingConnection {
  const frames: ServerEnvelope[] = [];
  const closedWith: Array<{ code: number; reason: string }> = [];
  return {
    hostId,
    frames,
    closedWith,
    send(frame) {
      const decoded = decodeServerMessage(frame);
      if (!decoded.ok) {
        throw new Error(`invalid frame sent: ${decoded.error.message}`);
      }
      frames.push(decoded.message);
    },
    close(code, reason) {
      closedWith.push({ code, reason });
    },
  };
}
