/**
 * @module connection/connection
 * The agent's side of the WebSocket: hello on open, heartbeat every 30 s, inbound frames decoded
 * and dispatched through a typed handler map, and reconnects with backoff until the server says
 * something that no reconnect can fix (close 4001 or 4003, or HTTP 401 on the upgrade). A frame
 * that does not decode is logged and ignored; nothing the server sends can throw out of here.
 */
import {
  decodeServerMessage,
  dispatchServerMessage,
  type ErrorMessage,
  encode,
  HEARTBEAT_INTERVAL_MS,
  type Hello,
  RECONNECT_BACKOFF,
  type ServerMessageHandlers,
} from "@fleetback/protocol";
import { WebSocket } from "ws";
import type { Logger } from "../log/logger.js";
import { TlsPinMismatchError } from "../net/tls-pin.js";
import { type CancelTimer, systemTimers, type Timers } from "../time/timers.js";
import { type OpenSocket, openAgentSocket, type SocketTarget } from "./agent-socket.js";
import { createBackoff } from "./backoff.js";
import { type ConnectionOutcome, fatalOnClose, UNAUTHORISED } from "./outcome.js";

export type { ConnectionOutcome, FatalReason } from "./outcome.js";

export interface ConnectionOptions {
  target: SocketTarget;
  identity: Omit<Hello, "running_job_ids">;
  /** Read on every hello and heartbeat. */
  runningJobIds: () => string[];
  handlers: ServerMessageHandlers<void | Promise<void>>;
  /** Runs right after each hello went out: the moment to flush what waited for a connection. */
  onReady?: () => void;
  /**
   * Runs on the first server message of each connection: the server answers hello only once it
   * accepted it, so this is the proof an updated version needs before it commits its trial.
   */
  onAccepted?: () => void;
  log: Logger;
  timers?: Timers;
  random?: () => number;
  openSocket?: OpenSocket;
}

export interface AgentConnection {
  /** Connects and keeps reconnecting; resolves on stop() or a fatal close. */
  run(): Promise<ConnectionOutcome>;
  stop(): void;
  /** Sends an encoded frame if a connection is up and hello went out; false otherwise. */
  sendFrame(frame: string): boolean;
}

function frameBytes(data: WebSocket.RawData): Uint8Array {
  if (Array.isArray(data)) {
    return Buffer.concat(data);
  }
  return data instanceof ArrayBuffer ? new Uint8Array(data) : data;
}

export function createAgentConnection(options: ConnectionOptions): AgentConnection {
  const { log } = options;
  const timers = options.timers ?? systemTimers;
  const open = options.openSocket ?? openAgentSocket;
  const backoff = createBackoff({ random: options.random });
  let socket: WebSocket | undefined;
  let ready = false;
  let stopping = false;
  let cancelReconnect: CancelTimer | undefined;
  let finish: ((outcome: ConnectionOutcome) => void) | undefined;
  let running: Promise<ConnectionOutcome> | undefined;

  const end = (outcome: ConnectionOutcome) => {
    const resolve = finish;
    finish = undefined;
    running = undefined;
    resolve?.(outcome);
  };

  const reconnectLater = (fields: Record<string, string | number | undefined>) => {
    const delay = backoff.next();
    log.warn("disconnected from the server; reconnecting", { ...fields, retry_in_ms: delay });
    cancelReconnect = timers.after(delay, () => {
      cancelReconnect = undefined;
      connect();
    });
  };

  const dispatch = (data: WebSocket.RawData, remember: (error: ErrorMessage) => void, first: boolean) => {
    const result = decodeServerMessage(frameBytes(data));
    if (!result.ok) {
      log.warn("ignored an invalid frame from the server", {
        code: result.error.code,
        problem: result.error.message,
      });
      return false;
    }
    const message = result.message;
    // An error (ErrProtocolTooOld before close 4001, say) is no acceptance.
    const accepts = message.type !== "error";
    if (message.type === "error") {
      remember(message.payload);
    }
    if (first && accepts) {
      try {
        options.onAccepted?.();
      } catch (cause) {
        log.error("onAccepted failed", { error: String(cause) });
      }
    }
    const failed = (cause: unknown) =>
      log.error("handling a server message failed", { type: message.type, error: String(cause) });
    try {
      const outcome = dispatchServerMessage(options.handlers, message);
      if (outcome instanceof Promise) {
        outcome.catch(failed);
      }
    } catch (cause) {
      failed(cause);
    }
    return accepts;
  };

  const connect = () => {
    if (stopping) {
      end({ kind: "stopped" });
      return;
    }
    let ws: WebSocket;
    try {
      ws = open(options.target);
    } catch (cause) {
      reconnectLater({ error: String(cause) });
      return;
    }
    socket = ws;
    const stopTimers: CancelTimer[] = [];
    let fatal: ConnectionOutcome | undefined;
    let lastError: string | undefined;
    let serverError: ErrorMessage | undefined;
    let accepted = false;

    ws.on("open", () => {
      try {
        ws.send(encode("hello", { ...options.identity, running_job_ids: options.runningJobIds() }));
      } catch (cause) {
        // Only a bug produces an invalid hello; say so instead of looping on a server that waits.
        log.error("could not build the hello message", { error: String(cause) });
        ws.close(1011, "invalid hello");
        return;
      }
      ready = true;
      log.info("connected to the server", { server: options.target.serverUrl });
      stopTimers.push(
        timers.every(HEARTBEAT_INTERVAL_MS, () => {
          if (ws.readyState === WebSocket.OPEN) {
            ws.send(encode("heartbeat", { running_job_ids: options.runningJobIds() }));
          }
        }),
        // Only a connection that stayed up this long proves the server is back for good.
        timers.after(RECONNECT_BACKOFF.resetAfterMs, () => backoff.reset()),
      );
      options.onReady?.();
    });
    ws.on("message", (data) => {
      if (dispatch(data, (error) => (serverError = error), !accepted)) {
        accepted = true;
      }
    });
    ws.on("unexpected-response", (_request, response) => {
      response.resume();
      if (response.statusCode === 401) {
        fatal = UNAUTHORISED;
      } else {
        lastError = `the server answered the WebSocket upgrade with HTTP ${response.statusCode}`;
      }
      ws.terminate();
    });
    ws.on("error", (error) => {
      if (error instanceof TlsPinMismatchError) {
        // Not a network hiccup: either the certificate changed or someone is in the middle.
        log.error(error.message, { server: options.target.serverUrl });
      }
      lastError ??= error.message;
    });
    ws.on("close", (code, reason) => {
      for (const stopTimer of stopTimers) {
        stopTimer();
      }
      socket = undefined;
      ready = false;
      const outcome = fatal ?? fatalOnClose(code, serverError);
      if (outcome?.kind === "fatal") {
        log.error(outcome.message, { close_code: code, help_url: outcome.helpUrl });
        end(outcome);
      } else if (stopping) {
        end({ kind: "stopped" });
      } else {
        reconnectLater({ close_code: code, reason: reason.toString() || undefined, error: lastError });
      }
    });
  };

  return {
    run() {
      if (running === undefined) {
        stopping = false;
        running = new Promise((resolve) => {
          finish = resolve;
        });
        connect();
      }
      return running;
    },
    stop() {
      stopping = true;
      if (cancelReconnect) {
        cancelReconnect();
        cancelReconnect = undefined;
        end({ kind: "stopped" });
      } else if (socket?.readyState === WebSocket.OPEN) {
        socket.close(1000, "agent stopping");
      } else {
        socket?.terminate();
      }
    },
    sendFrame(frame) {
      if (socket === undefined || !ready || socket.readyState !== WebSocket.OPEN) {
        return false;
      }
      socket.send(frame);
      return true;
    },
  };
}
