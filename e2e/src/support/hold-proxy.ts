/**
 * @module support/hold-proxy
 * An HTTP relay in front of a rest-server that can hold requests back: while a hold is on, the
 * requests it matches wait, unsent, until `release()`. A test that needs restic to stay in one
 * phase (everything read, the pack upload pending) holds the upload until it has seen that phase,
 * rather than slowing the upload down and hoping the phase lasts long enough to be seen.
 */
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface HoldProxy {
  url: string;
  /** Requests that match from now on wait until `release()`. */
  hold(match: (method: string, path: string) => boolean): void;
  /** How many requests wait now. */
  readonly held: number;
  /** Sends the waiting requests on and holds nothing more. */
  release(): void;
  /** Stops listening and cuts every connection: the port then refuses, as a stopped server's. */
  close(): Promise<void>;
}

export async function startHoldProxy(target: string): Promise<HoldProxy> {
  const upstream = new URL(target);
  let match: ((method: string, path: string) => boolean) | undefined;
  let waiting: Array<() => void> = [];

  const forward = (req: IncomingMessage, res: ServerResponse) => {
    const relay = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        path: req.url,
        method: req.method,
        headers: { ...req.headers, host: upstream.host },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    relay.on("error", () => {
      res.writeHead(502);
      res.end();
    });
    req.pipe(relay);
  };

  const server: Server = createServer((req, res) => {
    if (match?.(req.method ?? "", req.url ?? "")) {
      waiting.push(() => forward(req, res));
      return;
    }
    forward(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));

  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hold(matcher) {
      match = matcher;
    },
    get held() {
      return waiting.length;
    },
    release() {
      match = undefined;
      const go = waiting;
      waiting = [];
      for (const send of go) {
        send();
      }
    },
    close: () =>
      new Promise((resolve) => {
        waiting = [];
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
