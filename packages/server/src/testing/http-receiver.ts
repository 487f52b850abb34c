/**
 * @module testing/http-receiver
 * A real HTTP server on port 0 that records every request (method, path, headers, raw body) and
 * answers from a script: a queue of statuses, then 200. "hang" never answers, for timeouts.
 * Notification tests point channels at it to see exactly what went over the wire.
 */
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { eventually } from "./eventually.js";

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export type ScriptedReply = number | "hang" | { status: number; body: string };

export interface HttpReceiver {
  /** http://<host>:<port> */
  url: string;
  requests: ReceivedRequest[];
  /** The next requests get these answers, in order; afterwards 200. */
  reply(...answers: ScriptedReply[]): void;
  /** Resolves with the requests once at least `count` have arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

/** `host` is where it listens: any 127.x address works on Linux, for tests of the allow-list. */
export async function startHttpReceiver(host = "127.0.0.1"): Promise<HttpReceiver> {
  const requests: ReceivedRequest[] = [];
  const script: ScriptedReply[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      requests.push({
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      });
      const answer = script.shift() ?? 200;
      if (answer === "hang") {
        return;
      }
      const status = typeof answer === "number" ? answer : answer.status;
      res.writeHead(status, { "Content-Type": "text/plain" });
      res.end(typeof answer === "object" ? answer.body : status < 300 ? "ok" : `scripted ${status}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    requests,
    reply(...answers) {
      script.push(...answers);
    },
    // A hang guard, not a budget: a loaded machine is slow, not broken.
    waitFor(count, timeoutMs = 30_000) {
      return eventually(
        () => requests,
        (seen) => seen.length >= count,
        { timeoutMs, what: `${count} request(s) at the receiver` },
      );
    },
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
