/**
 * @module agent-channel/attach-agent-channel
 * `GET /api/agents/ws`: the agents' WebSocket endpoint, one route of the server's upgrade router
 * (Hono serves plain requests only). The bearer is checked before the upgrade; each accepted
 * socket becomes an agent session.
 */

import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { HELLO_DEADLINE_MS, sleep, systemClock, systemTimers } from "@fleetback/protocol";
import { WebSocketServer } from "ws";
import { trustedProxyList } from "../config.js";
import { authenticateAgent, UNAUTHORISED_BODY } from "../hosts/agent-auth.js";
import { createLastSeenWriter } from "../hosts/last-seen-writer.js";
import { markHostsOffline } from "../hosts/presence.js";
import { resolveClientAddress } from "../http/client-address.js";
import { refuseUpgrade } from "../http/refuse-upgrade.js";
import type { UpgradeRouter } from "../http/upgrade-router.js";
import type { JobReports } from "../jobs/job-reports.js";
import { type AgentSession, startAgentSession } from "./agent-session.js";
import type { AgentChannelOptions, ChannelContext, ChannelDeps } from "./channel-context.js";
import { createKeyedQueue } from "./keyed-queue.js";

export type { AgentChannelOptions, ChannelDeps };

export const AGENT_CHANNEL_PATH = "/api/agents/ws";

/**
 * Above MAX_FRAME_BYTES on purpose: a frame between 1 and 4 MiB reaches the decoder, which answers
 * `invalid_message` and keeps the connection (the contract); only larger ones make `ws` close (1009).
 */
export const AGENT_CHANNEL_MAX_PAYLOAD = 4 * 1024 * 1024;

export interface AgentChannel {
  /** Resolves once every agent message received so far has been handled (tests, shutdown). */
  idle(): Promise<void>;
  /**
   * Closes every agent socket (1001) and waits for their pending work; the job reports it was
   * given stay open for their owner to close (and store the buffered log lines) after it.
   */
  close(): Promise<void>;
}

export function attachAgentChannel(
  upgrades: UpgradeRouter,
  deps: ChannelDeps,
  /** Built by the runtime, which closes it after the channel. */
  reports: JobReports,
  options: AgentChannelOptions = {},
): AgentChannel {
  const { log } = deps;
  const timers = options.timers ?? systemTimers;
  const ctx: ChannelContext = {
    deps,
    queue: createKeyedQueue(),
    reports,
    // Real timers even where tests inject theirs: a heartbeat lands within a second either way.
    lastSeen: createLastSeenWriter({ db: deps.db, log: deps.log }),
    helloDeadlineMs: options.helloDeadlineMs ?? HELLO_DEADLINE_MS,
    timers,
    closingHosts: undefined,
  };
  // UTF-8 is checked by the decoder, which answers invalid_message; ws itself would close with 1007.
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: AGENT_CHANNEL_MAX_PAYLOAD,
    skipUTF8Validation: true,
  });
  const sessions = new Set<AgentSession>();
  let closing = false;

  const trustedProxies = trustedProxyList(deps.config.trustedProxies);
  async function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const auth = await authenticateAgent(deps.db, req.headers.authorization);
    if (!auth.ok) {
      const remote = resolveClientAddress(
        req.socket.remoteAddress,
        req.headers["x-forwarded-for"],
        trustedProxies,
      );
      log.warn({ remote, reason: auth.reason }, "agent upgrade refused");
      refuseUpgrade(socket, 401, UNAUTHORISED_BODY);
      return;
    }
    if (closing) {
      refuseUpgrade(socket, 503, { code: "unavailable", message: "the server is shutting down" });
      return;
    }
    if (socket.destroyed) {
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const session = startAgentSession(ctx, ws, auth.identity, (ended) => sessions.delete(ended));
      sessions.add(session);
    });
  }

  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on("error", (err) => log.debug({ err }, "agent upgrade socket error"));
    upgrade(req, socket, head).catch((err: unknown) => {
      log.error({ err }, "agent upgrade failed");
      refuseUpgrade(socket, 503, {
        code: "unavailable",
        message: "the server cannot accept agents right now",
      });
    });
  };
  const removeRoute = upgrades.add({ matches: (path) => path === AGENT_CHANNEL_PATH, handle: onUpgrade });

  let closed: Promise<void> | undefined;
  return {
    idle: () => ctx.queue.idle(),
    close() {
      closed ??= (async () => {
        closing = true;
        const closingHosts = new Set<string>();
        ctx.closingHosts = closingHosts;
        const drained = deps.hub.drain();
        removeRoute();
        for (const session of sessions) {
          session.close(1001, "server shutting down");
        }
        const grace = options.closeGraceMs ?? 2_000;
        // Real time, not deps.clock: sockets close on the wall clock even under a test's manual one.
        const deadline = systemClock.now().getTime() + grace;
        while (sessions.size > 0 && systemClock.now().getTime() < deadline) {
          await sleep(systemTimers, 10);
        }
        for (const session of sessions) {
          session.terminate();
        }
        // A terminated socket's close handler still runs (and queues its offline mark).
        while (sessions.size > 0 && systemClock.now().getTime() < deadline + 1_000) {
          await sleep(systemTimers, 10);
        }
        await ctx.queue.idle();
        await ctx.lastSeen.flush();
        const ids = [...closingHosts];
        await drained;
        await markHostsOffline(
          deps.db,
          ids.filter((id) => !deps.hub.isOnline(id)),
          deps.clock.now(),
        ).catch((err: unknown) =>
          log.error({ err, hosts: ids.length }, "marking hosts offline at shutdown failed"),
        );
        await new Promise<void>((resolve) => wss.close(() => resolve()));
      })();
      return closed;
    },
  };
}
