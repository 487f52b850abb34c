/**
 * @module testing/recording-connection
 * An AgentConnection that records what the hub sends it: for tests of domain functions that push
 * to an agent, and of the hubs themselves, without a socket.
 */
import { decodeServerMessage, type ServerEnvelope } from "@fleetback/protocol";
import type { AgentConnection } from "../hub/local-hub.js";

export interface RecordingConnection extends AgentConnection {
  frames: ServerEnvelope[];
  /** The same frames as the hub wrote them, for a test of the encoding itself. */
  sent: string[];
  closedWith: Array<{ code: number; reason: string }>;
}

export function createRecordingConnection(hostId: string): RecordingConnection {
  const frames: ServerEnvelope[] = [];
  const sent: string[] = [];
  const closedWith: Array<{ code: number; reason: string }> = [];
  return {
    hostId,
    frames,
    sent,
    closedWith,
    send(frame) {
      sent.push(frame);
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
