/**
 * @module agent/agent-sender
 * The agent's one emit path. Job reports go straight onto the socket when it is up and into the
 * outbox when it is not, so a job that finishes during a reconnect is still reported; the other
 * kinds belong to the connection they are sent on and are dropped without one.
 */
import { type AgentMessageType, encode, type PayloadOf } from "@fleetback/protocol";
import { createOutbox, type Outbox } from "../connection/outbox.js";
import type { Logger } from "../log/logger.js";

/**
 * Kept in the outbox while disconnected. `snapshots.report` too: it replaces the server's list;
 * and `repo.stats`, whose `last_check_status` or `last_prune_at` would otherwise be lost.
 */
const QUEUED_MESSAGES: ReadonlySet<string> = new Set([
  "job.started",
  "job.progress",
  "job.finished",
  "log.stream",
  "snapshots.report",
  "repo.stats",
]);

export interface AgentSender {
  /** True when the frame went out or waits in the outbox; false when it was dropped. */
  send<K extends AgentMessageType>(type: K, payload: PayloadOf<K>, id?: string): boolean;
  /** The socket frames go to from now on (a new connection), or none. */
  attach(sendFrame: ((frame: string) => boolean) | undefined): void;
  /** Sends what waits, in order, on the attached socket. */
  drain(): void;
  readonly outbox: Outbox;
}

export function createAgentSender(log: Logger): AgentSender {
  const outbox = createOutbox();
  let sendFrame: ((frame: string) => boolean) | undefined;
  const drain = () => {
    if (sendFrame) {
      outbox.drain(sendFrame);
    }
  };
  // Methods are plain closures: the agent hands `send` around on its own.
  return {
    outbox,
    attach(next) {
      sendFrame = next;
    },
    drain,
    send(type, payload, id) {
      let frame: string;
      try {
        frame = encode(type, payload, id);
      } catch (cause) {
        log.error("refused to send an invalid message", { type, error: String(cause) });
        return false;
      }
      const queued = QUEUED_MESSAGES.has(type);
      // Queued kinds keep their order behind what already waits; the others only need a live socket.
      if ((!queued || outbox.size === 0) && sendFrame?.(frame)) {
        return true;
      }
      if (!queued) {
        return false;
      }
      const jobId = "job_id" in payload && typeof payload.job_id === "string" ? payload.job_id : undefined;
      outbox.push(frame, type, jobId);
      drain();
      return true;
    },
  };
}
