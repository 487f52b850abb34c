/**
 * @module http/request-limits
 * Bounds on what one request may make the server hold or wait for, applied before anyone is
 * authenticated: body size (413), URL length (414), header size and receive timeouts on the
 * Node server. No route accepts uploads (releases enter through `fleetback-server
 * import-release`), so one body limit fits every route; the largest legitimate bodies, source
 * groups and restore selections, stay far below it in practice.
 */
import type { ServerOptions } from "node:http";
import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { RequestError } from "../errors.js";

export const MAX_BODY_BYTES = 1024 * 1024;
/** A restore-tree path of 4,096 characters, percent-encoded, still fits. */
export const MAX_URL_BYTES = 16 * 1024;
/**
 * Request line and headers together (431 above it). Node counts the URL in this budget, so it is
 * twice Node's default of 16 KiB to leave the URL limit above room for cookies and the rest.
 */
export const MAX_HEADER_BYTES = 32 * 1024;

/**
 * Receive timeouts only: they end a request whose headers or body arrive too slowly
 * (slowloris), never a response being sent, so SEA downloads and job logs of any length are
 * unaffected; upgraded WebSockets leave the HTTP server's accounting once upgraded.
 */
export const SERVER_TIMEOUTS = {
  headersTimeout: 10_000,
  requestTimeout: 30_000,
  keepAliveTimeout: 5_000,
  // How often Node looks for requests past those timeouts (its default, 30 s, would double them).
  connectionsCheckingInterval: 1_000,
} as const;

/** Options for node:http / node:https createServer. */
export function serverOptions(): ServerOptions {
  return { maxHeaderSize: MAX_HEADER_BYTES, ...SERVER_TIMEOUTS };
}

function tooLarge(limit: number): RequestError {
  // No Connection: close: a client still uploading would see a reset instead of this answer. Node
  // discards the unread rest, for at most the request timeout.
  return new RequestError("too_large", `body: larger than the limit of ${limit} bytes`);
}

export function requestLimits(options: { maxBodyBytes?: number } = {}): MiddlewareHandler {
  const maxSize = options.maxBodyBytes ?? MAX_BODY_BYTES;
  const limitBody = bodyLimit({
    maxSize,
    onError: () => {
      throw tooLarge(maxSize);
    },
  });
  return async (c, next) => {
    if (c.req.url.length > MAX_URL_BYTES) {
      throw new RequestError("uri_too_long", `url: longer than the limit of ${MAX_URL_BYTES} bytes`);
    }
    return limitBody(c, next);
  };
}
