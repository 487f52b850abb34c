/**
 * @module connection/agent-socket
 * Opens the agent's WebSocket: `GET {base}/api/agents/ws` with the bearer token, through the
 * pinning HTTPS agent when a pin is configured. A factory port, so the connection logic can be
 * pointed at any socket-like object.
 */
import { WebSocket } from "ws";
import { agentSocketUrl } from "../net/server-url.js";
import { PinnedAgent } from "../net/tls-pin.js";

export interface SocketTarget {
  serverUrl: string;
  token: string;
  /** Normalised hex pin (see normalizePin). */
  tlsPin?: string;
}

export type OpenSocket = (target: SocketTarget) => WebSocket;

/** Frames over 1 MiB are the codec's to refuse (logged and ignored), not a reason to drop the socket. */
const MAX_PAYLOAD_BYTES = 8 * 1024 * 1024;
const HANDSHAKE_TIMEOUT_MS = 20_000;

export const openAgentSocket: OpenSocket = (target) =>
  new WebSocket(agentSocketUrl(target.serverUrl), {
    headers: { Authorization: `Bearer ${target.token}` },
    agent: target.tlsPin === undefined ? undefined : new PinnedAgent(target.tlsPin),
    handshakeTimeout: HANDSHAKE_TIMEOUT_MS,
    maxPayload: MAX_PAYLOAD_BYTES,
    perMessageDeflate: false,
    followRedirects: false,
  });
