/**
 * @module job-page/job-stream
 * `GET /jobs/:id/stream` as a WebSocket (the job page's live progress and log): one text
 * frame of JSON `{type, payload}` per feed message (job-feed.ts), the stored state first; after
 * `job.finished` the server closes with 1000. A late subscriber gets state and a synthetic
 * job.finished at once.
 *
 * Authorisation is the app's own: before upgrading, the request is replayed through the Hono app
 * as a plain GET of the same path with the same cookie or bearer, where the route answers 426
 * only to a viewer (or better) of an existing job. Every other answer (401, 403, 404) is returned
 * as the refusal, so the role table and route-roles.test.ts cover this endpoint too. Browsers
 * always send Origin on a WebSocket; one that is not this server's is refused (cross-site
 * WebSocket hijacking), since a cookie alone would otherwise authenticate it.
 *
 * An open stream is authorised again every REAUTHORISE_MS the same way: a session that was
 * signed out, expired or lost its role, or a job that is gone, ends the stream with 4000 + the
 * HTTP status (4401, 4403, 4404) and the refusal's message, so the page can say why instead of
 * reconnecting. Watching a running job counts as activity for the session's idle timeout.
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { systemTimers, type Timers } from "@fleetback/protocol";
import { type WebSocket, WebSocketServer } from "ws";
import { type ErrorCode, isErrorCode } from "../errors.js";
import { refuseUpgrade } from "../http/refuse-upgrade.js";
import type { UpgradeRouter } from "../http/upgrade-router.js";
import type { JobEvents } from "../jobs/job-events.js";
import type { Logger } from "../log.js";
import { openJobFeed } from "./job-feed.js";

export type { StreamMessage } from "./job-feed.js";

const STREAM_PATH = /^\/jobs\/([0-9A-HJKMNP-TV-Z]{26})\/stream$/;
/** A ping now and then keeps proxies from timing the socket out and finds dead browsers. */
export const PING_MS = 25_000;
/** A browser that stops reading is cut off (1013) rather than buffered for without bound. */
export const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;
/** How often an open stream checks that its caller may still follow the job. */
export const REAUTHORISE_MS = 30_000;
/** A stream refused after it opened closes with this plus the HTTP status (4401, 4403, 4404). */
export const REFUSED_CLOSE_BASE = 4000;
/** The app's answer to an authorised plain GET of the stream path. */
export const STREAM_AUTHORISED_STATUS = 426;

export interface JobStreamDeps {
  db: Parameters<typeof openJobFeed>[0]["db"];
  jobEvents: JobEvents;
  log: Logger;
  config: { baseUrl: string };
}

export interface JobStreamOptions {
  /** The Hono app's fetch: runs authentication and the route's role check. */
  authorise: (request: Request, env: { incoming: IncomingMessage }) => Response | Promise<Response>;
  pingMs?: number;
  reauthoriseMs?: number;
  /** Pings, re-authorisation and the shutdown grace; the system port unless a test drives them. */
  timers?: Timers;
}

export interface JobStreams {
  /** Open streams (tests, metrics). */
  count(): number;
  /** Ends every stream (1001; cut after a short grace) and stops accepting new ones. */
  close(): Promise<void>;
}

function copyHeaders(req: IncomingMessage): Headers {
  const headers = new Headers();
  for (const name of ["cookie", "authorization", "user-agent", "x-forwarded-for"]) {
    const value = req.headers[name];
    if (typeof value === "string") {
      headers.set(name, value);
    }
  }
  return headers;
}

async function refusalOf(response: Response): Promise<{ status: number; code: ErrorCode; message: string }> {
  // Pages answer an anonymous browser with a redirect to /login; a socket cannot follow it.
  if (response.status >= 300 && response.status < 400) {
    return { status: 401, code: "unauthorised", message: "log in to follow this job" };
  }
  const body = (await response.json().catch(() => ({}))) as { code?: unknown; message?: unknown };
  return {
    status: response.status,
    code: isErrorCode(body.code) ? body.code : "forbidden",
    message: typeof body.message === "string" ? body.message : "this stream is not available",
  };
}

/** A close reason is at most 123 bytes of UTF-8. */
function closeReason(message: string): string {
  let reason = message;
  while (Buffer.byteLength(reason) > 123) {
    reason = reason.slice(0, -1);
  }
  return reason;
}

export function attachJobStreams(
  upgrades: UpgradeRouter,
  deps: JobStreamDeps,
  options: JobStreamOptions,
): JobStreams {
  const { log } = deps;
  const timers = options.timers ?? systemTimers;
  const wss = new WebSocketServer({ noServer: true, maxPayload: 4096 });
  const open = new Set<WebSocket>();
  let closing = false;
  /** Set while close() waits for the streams it closed to go. */
  let lastClosed: (() => void) | undefined;

  /** The app's verdict on following `jobId` with these credentials: undefined when allowed. */
  async function refusal(
    jobId: string,
    headers: Headers,
    req: IncomingMessage,
  ): Promise<{ status: number; code: ErrorCode; message: string } | undefined> {
    const answer = await options.authorise(
      new Request(new URL(`/jobs/${jobId}/stream`, deps.config.baseUrl), { headers }),
      { incoming: req },
    );
    return answer.status === STREAM_AUTHORISED_STATUS ? undefined : refusalOf(answer);
  }

  function serve(ws: WebSocket, jobId: string, recheck: () => ReturnType<typeof refusal>): void {
    open.add(ws);
    const stopReauthorising = timers.every(
      options.reauthoriseMs ?? REAUTHORISE_MS,
      () => {
        recheck()
          .then((refused) => {
            if (refused && ws.readyState === ws.OPEN) {
              log.info({ job_id: jobId, status: refused.status }, "job stream ended: no longer authorised");
              ws.close(REFUSED_CLOSE_BASE + refused.status, closeReason(refused.message));
            }
          })
          .catch((err: unknown) => log.debug({ err, job_id: jobId }, "job stream re-authorisation failed"));
      },
      { unref: true },
    );
    let alive = true;
    const stopPinging = timers.every(
      options.pingMs ?? PING_MS,
      () => {
        if (!alive) {
          ws.terminate();
          return;
        }
        alive = false;
        ws.ping();
      },
      { unref: true },
    );
    ws.on("pong", () => {
      alive = true;
    });
    let stopFeed = () => {};
    ws.on("close", () => {
      stopPinging();
      stopReauthorising();
      open.delete(ws);
      if (open.size === 0) {
        lastClosed?.();
      }
      stopFeed();
    });
    ws.on("error", (err) => log.debug({ err, job_id: jobId }, "job stream socket error"));
    // The browser has nothing to say on this socket; a message is ignored.
    openJobFeed(deps, jobId)
      .then((feed) => {
        stopFeed = feed.stop;
        if (ws.readyState !== ws.OPEN) {
          feed.stop();
          return;
        }
        feed.follow((message) => {
          if (ws.readyState !== ws.OPEN) {
            feed.stop();
            return;
          }
          if (ws.bufferedAmount > MAX_BUFFERED_BYTES) {
            feed.stop();
            ws.close(1013, "too slow; reconnect");
            return;
          }
          ws.send(JSON.stringify(message));
          if (message.type === "job.finished") {
            ws.close(1000, "job finished");
          }
        });
      })
      .catch((err: unknown) => {
        log.warn({ err, job_id: jobId }, "job stream could not open");
        ws.close(1011, "job stream unavailable");
      });
  }

  async function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, jobId: string): Promise<void> {
    const base = new URL(deps.config.baseUrl);
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== base.origin) {
      refuseUpgrade(socket, 403, {
        code: "forbidden",
        message: "Origin: streams from other sites are refused",
      });
      return;
    }
    const headers = copyHeaders(req);
    const refused = await refusal(jobId, headers, req);
    if (refused) {
      refuseUpgrade(socket, refused.status, { code: refused.code, message: refused.message });
      return;
    }
    if (closing) {
      refuseUpgrade(socket, 503, { code: "unavailable", message: "the server is shutting down" });
      return;
    }
    if (socket.destroyed) {
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => serve(ws, jobId, () => refusal(jobId, headers, req)));
  }

  const removeRoute = upgrades.add({
    matches: (path) => STREAM_PATH.test(path),
    handle(req, socket, head) {
      const jobId = STREAM_PATH.exec(new URL(req.url ?? "/", "http://upgrade.invalid").pathname)?.[1] ?? "";
      socket.on("error", (err) => log.debug({ err }, "job stream upgrade socket error"));
      upgrade(req, socket, head, jobId).catch((err: unknown) => {
        log.error({ err, job_id: jobId }, "job stream upgrade failed");
        refuseUpgrade(socket, 503, {
          code: "unavailable",
          message: "the job stream is unavailable right now",
        });
      });
    },
  });

  return {
    count: () => open.size,
    async close() {
      closing = true;
      removeRoute();
      for (const ws of open) {
        ws.close(1001, "server shutting down");
      }
      // Browsers answer the close within the grace, and the last answer ends the wait; the grace is
      // a timer, not a clock reading, so a test's timers end it as they end the pings.
      if (open.size > 0) {
        let stopGrace = () => {};
        await new Promise<void>((resolve) => {
          lastClosed = resolve;
          stopGrace = timers.after(1_000, resolve);
        });
        stopGrace();
      }
      for (const ws of open) {
        ws.terminate();
      }
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
