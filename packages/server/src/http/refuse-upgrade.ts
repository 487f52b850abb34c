/**
 * @module http/refuse-upgrade
 * The answer to an upgrade request that gets no WebSocket: a plain HTTP response with a JSON error
 * body, written on the raw socket (no Hono context exists for an upgrade), then the socket closed.
 */
import { STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import { type ErrorBody, errorBody } from "../errors.js";

export function refuseUpgrade(
  socket: Duplex,
  status: number,
  body: Pick<ErrorBody, "code" | "message">,
): void {
  if (socket.destroyed) {
    return;
  }
  const text = JSON.stringify(errorBody(body.code, body.message));
  socket.once("finish", () => socket.destroy());
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ""}\r\n` +
      "Connection: close\r\n" +
      "Content-Type: application/json; charset=utf-8\r\n" +
      `Content-Length: ${Buffer.byteLength(text)}\r\n` +
      "\r\n" +
      text,
  );
}
