/**
 * @module agent-channel/agent-session
 * The life of one agent socket: the hello deadline, the frame loop, the invalid-frame limit and
 * the close. Frames are decoded here, synchronously and in arrival order; valid messages then run
 * on the host's queue, one after another. Nothing thrown in here reaches `ws`: the loop logs and
 * carries on.
 */

import { isConnectionError } from "@fleetback/db";
import {
  type AgentEnvelope,
  CLOSE_CODES,
  type DecodeError,
  decodeAgentMessage,
  dispatchAgentMessage,
  ERROR_CODES,
  encode,
} from "@fleetback/protocol";
import type { RawData, WebSocket } from "ws";
import { retryWhileDatabaseDown } from "../database-retry.js";
import { markHostOffline } from "../hosts/presence.js";
import { createReportAssembler } from "../snapshots/report-assembler.js";
import { createAgentHandlers } from "./agent-handlers.js";
import { createAgentSocket } from "./agent-socket.js";
import type { ChannelContext } from "./channel-context.js";
import { databaseSafe, mayHoldUnstorable } from "./database-safe-text.js";
import { type Answer, rejectTooOld } from "./hello.js";
import { createInvalidFrameLimiter } from "./invalid-frame-limiter.js";
import { tooOldHelloVersion } from "./old-hello.js";

export interface AgentSession {
  readonly hostId: string;
  /** Closes the socket (shutdown); the usual close handling follows. */
  close(code: number, reason: string): void;
  /** Cuts the socket without a closing handshake. */
  terminate(): void;
}

function toBytes(data: RawData): Uint8Array {
  if (Array.isArray(data)) {
    return Buffer.concat(data);
  }
  return data instanceof ArrayBuffer ? new Uint8Array(data) : data;
}

function frameType(frame: string): string | undefined {
  return /"type":"([^"]{1,64})"/.exec(frame)?.[1];
}

export function startAgentSession(
  ctx: ChannelContext,
  ws: WebSocket,
  auth: { hostId: string; tokenHash: string },
  onEnd: (session: AgentSession) => void,
): AgentSession {
  const { log, clock, hub, db } = ctx.deps;
  const { hostId } = auth;
  let phase: "awaiting_hello" | "greeting" = "awaiting_hello";
  let accepted = false;
  const limiter = createInvalidFrameLimiter(clock);

  const socket = createAgentSocket(hostId, ws, (frame, reason) => {
    log.warn({ host_id: hostId, type: frameType(frame), reason }, "frame to agent not sent");
  });
  // The session's own frames (error replies, the hello's refusals) go to this socket, even before
  // it is the host's one, and ahead of what the gate holds; everything else goes through the hub.
  const answer: Answer = (type, payload) => socket.sendNow(encode(type, payload));
  // Parts of a snapshot report live as long as this socket: a disconnect drops them.
  const snapshotReports = createReportAssembler({ hostId, log, timers: ctx.timers });
  const handlers = createAgentHandlers(
    ctx,
    {
      hostId,
      tokenHash: auth.tokenHash,
      socket,
      answer,
      accept: () => {
        accepted = true;
      },
    },
    snapshotReports,
  );
  const cancelDeadline = ctx.timers.after(ctx.helloDeadlineMs, () => {
    if (phase === "awaiting_hello") {
      log.info({ host_id: hostId }, "no hello in time; closing");
      socket.close(CLOSE_CODES.noHello, "no hello in time");
    }
  });

  function refuse(error: Pick<DecodeError, "code" | "message" | "request_id">): void {
    const { code, message, request_id } = error;
    answer("error", request_id ? { code, message, request_id } : { code, message });
    if (limiter.record()) {
      log.warn({ host_id: hostId }, "too many invalid frames; closing");
      socket.close(CLOSE_CODES.tooManyInvalidFrames, "too many invalid frames");
    }
  }

  function handle(message: AgentEnvelope): void {
    // A tree.list.result only hands a reply to the browser request waiting for it: no database,
    // nothing to keep in order with the host's reports. On the host's queue it waited for every
    // catalogue part queued before it, ~1.4 s after a backup (issue 40, B4).
    if (message.type === "tree.list.result" && accepted) {
      dispatchAgentMessage(handlers, message).catch((err: unknown) => {
        log.error({ err, host_id: hostId, type: message.type }, "handling an agent message failed");
      });
      return;
    }
    ctx.queue
      .run(hostId, async () => {
        // Messages queued behind a hello that was refused are not the host's to act on.
        if (message.type !== "hello" && !accepted) {
          return;
        }
        if (message.type === "hello") {
          await dispatchAgentMessage(handlers, message);
          return;
        }
        // A report the agent sent is gone from its side: wait out a short database outage (on this
        // host's queue, so later reports keep their order) rather than drop it.
        await retryWhileDatabaseDown(() => dispatchAgentMessage(handlers, message), {
          onRetry: (err, attempt, delayMs) => {
            log.warn(
              { err, host_id: hostId, type: message.type, attempt, delay_ms: delayMs },
              "database unavailable; retrying the agent's message",
            );
          },
        });
      })
      .catch((err: unknown) => {
        log.error({ err, host_id: hostId, type: message.type }, "handling an agent message failed");
        // Closing makes the agent reconnect: its hello names the jobs it still runs and the server
        // ends the others as lost, instead of leaving one running forever behind a dropped report.
        if (isConnectionError(err) && !socket.closed) {
          socket.close(1011, "database unavailable");
        }
      });
  }

  function receive(data: RawData): void {
    // Frames still arriving after we closed (4001, 4008, ...) are not answered.
    if (socket.closed) {
      return;
    }
    const bytes = toBytes(data);
    const decoded = decodeAgentMessage(bytes);
    if (!decoded.ok) {
      const oldVersion =
        phase === "awaiting_hello" && decoded.error.type === "hello" ? tooOldHelloVersion(bytes) : undefined;
      if (oldVersion !== undefined) {
        phase = "greeting";
        cancelDeadline();
        // On the host's queue, like every other write about this host.
        void ctx.queue.run(hostId, () => rejectTooOld(ctx, { hostId, socket, answer }, oldVersion));
        return;
      }
      refuse(decoded.error);
      return;
    }
    // dump.chunk data is base64, which holds neither.
    const message =
      decoded.message.type === "dump.chunk" || !mayHoldUnstorable(bytes)
        ? decoded.message
        : databaseSafe(decoded.message);
    if (message.type === "hello") {
      if (phase !== "awaiting_hello") {
        refuse({
          code: ERROR_CODES.invalidMessage,
          message: "hello: already received",
          request_id: message.id,
        });
        return;
      }
      phase = "greeting";
      cancelDeadline();
    } else if (phase === "awaiting_hello") {
      refuse({
        code: ERROR_CODES.invalidMessage,
        message: `${message.type}: the first message must be hello`,
        request_id: message.id,
      });
      return;
    }
    handle(message);
  }

  const session: AgentSession = {
    hostId,
    close: (code, reason) => socket.close(code, reason),
    terminate: () => ws.terminate(),
  };

  ws.on("message", (data) => {
    try {
      receive(data);
    } catch (err) {
      log.error({ err, host_id: hostId }, "agent frame loop failed on one frame");
    }
  });
  ws.on("error", (err) => {
    log.debug({ err, host_id: hostId }, "agent socket error");
  });
  ws.on("close", (code, reason) => {
    cancelDeadline();
    snapshotReports.discard("agent disconnected");
    hub.unregister(socket);
    onEnd(session);
    if (accepted) {
      log.info({ host_id: hostId, code, reason: reason.toString() }, "agent disconnected");
    } else {
      log.debug({ host_id: hostId, code }, "agent socket closed before its hello was accepted");
    }
    if (phase === "awaiting_hello") {
      return;
    }
    if (ctx.closingHosts) {
      ctx.closingHosts.add(hostId);
      return;
    }
    // Queued behind the hello and the messages still pending (a hello in progress may just have
    // marked the host online), and skipped when a newer socket has taken over meanwhile.
    ctx.queue
      .run(hostId, async () => {
        // With replicas, this socket's presence row must be gone before the check below reads it.
        await hub.settle(hostId);
        if (!hub.isOnline(hostId)) {
          await markHostOffline(db, hostId, clock.now());
        }
      })
      .catch((err: unknown) => {
        log.error({ err, host_id: hostId }, "marking the host offline failed");
      });
  });
  return session;
}
