/**
 * @module http/upgrade-router
 * The HTTP server's one `upgrade` listener (Hono serves plain requests only): each WebSocket
 * endpoint (the agent channel, the job pages' live streams) claims its paths here, and an upgrade
 * no endpoint claims gets a plain 404 instead of a socket left hanging.
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { refuseUpgrade } from "./refuse-upgrade.js";

export type UpgradeListener = (req: IncomingMessage, socket: Duplex, head: Buffer) => void;

/** What the router needs of the HTTP(S) server. */
export interface UpgradeSource {
  on(event: "upgrade", listener: UpgradeListener): unknown;
  off(event: "upgrade", listener: UpgradeListener): unknown;
}

export interface UpgradeRoute {
  /** True when this endpoint serves the request's path. */
  matches(pathname: string): boolean;
  handle: UpgradeListener;
}

export interface UpgradeRouter {
  /** Adds an endpoint; the returned function removes it again. */
  add(route: UpgradeRoute): () => void;
  /** Stops listening on the server. */
  detach(): void;
}

export function attachUpgradeRouter(server: UpgradeSource): UpgradeRouter {
  const routes = new Set<UpgradeRoute>();
  const listener: UpgradeListener = (req, socket, head) => {
    const pathname = new URL(req.url ?? "/", "http://upgrade.invalid").pathname;
    for (const route of routes) {
      if (route.matches(pathname)) {
        route.handle(req, socket, head);
        return;
      }
    }
    refuseUpgrade(socket, 404, { code: "not_found", message: "no WebSocket endpoint at this path" });
  };
  server.on("upgrade", listener);
  return {
    add(route) {
      routes.add(route);
      return () => {
        routes.delete(route);
      };
    },
    detach() {
      server.off("upgrade", listener);
    },
  };
}
