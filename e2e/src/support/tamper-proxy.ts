/**
 * @module support/tamper-proxy
 * A man in the middle between agents and the server, for update tests: every HTTP request and the
 * agent WebSocket are relayed unchanged until the test switches a mode on. `bad-hash` flips a
 * byte of every agent artefact download; `bad-signature` does that and also rewrites the
 * `command.update` message's sha256 to the tampered bytes' hash, as an attacker who controls the
 * network and the message but not the release key would.
 */
import { createHash } from "node:crypto";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocket, WebSocketServer } from "ws";

export type TamperMode = "off" | "bad-hash" | "bad-signature";

export interface TamperProxy {
  url: string;
  mode: TamperMode;
  /** Artefact downloads seen, with the mode they were served in. */
  downloads: Array<{ path: string; mode: TamperMode }>;
  /** The bad-signature mode needs the tampered bytes' hash before the message goes out. */
  prepareBadSignature(body: Buffer): void;
  close(): Promise<void>;
}

const ARTEFACT_PATH = /^\/install\/agent\/[^/]+(\/[^/]+)?$/;

function tamper(body: Buffer): Buffer {
  const copy = Buffer.from(body);
  const at = Math.floor(copy.length / 2);
  copy[at] = (copy[at] ?? 0) ^ 0x01;
  return copy;
}

export async function startTamperProxy(target: string, port: number): Promise<TamperProxy> {
  const upstream = new URL(target);
  let tamperedSha: string | undefined;
  const proxy: TamperProxy = {
    url: `http://127.0.0.1:${port}`,
    mode: "off",
    downloads: [],
    prepareBadSignature(body) {
      tamperedSha = createHash("sha256").update(tamper(body)).digest("hex");
    },
    close: async () => undefined,
  };

  const server: Server = createServer((req, res) => {
    const headers = { ...req.headers, host: upstream.host };
    const forward = request(
      { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers },
      (answer) => {
        const isArtefact =
          req.method === "GET" && ARTEFACT_PATH.test(req.url ?? "") && answer.statusCode === 200;
        if (!isArtefact || proxy.mode === "off") {
          if (isArtefact) {
            proxy.downloads.push({ path: req.url ?? "", mode: proxy.mode });
          }
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
          return;
        }
        const chunks: Buffer[] = [];
        answer.on("data", (chunk: Buffer) => chunks.push(chunk));
        answer.on("end", () => {
          proxy.downloads.push({ path: req.url ?? "", mode: proxy.mode });
          const body = tamper(Buffer.concat(chunks));
          res.writeHead(200, { ...answer.headers, "content-length": String(body.length) });
          res.end(body);
        });
      },
    );
    forward.on("error", () => {
      res.writeHead(502);
      res.end();
    });
    req.pipe(forward);
  });

  const sockets = new WebSocketServer({ noServer: true });
  server.on("upgrade", (req, socket, head) => {
    const headers: Record<string, string> = {};
    if (req.headers.authorization) {
      headers.authorization = req.headers.authorization;
    }
    const outbound = new WebSocket(`ws://${upstream.host}${req.url ?? "/"}`, { headers });
    outbound.once("unexpected-response", (_request, response) => {
      socket.end(`HTTP/1.1 ${response.statusCode} Refused\r\nConnection: close\r\n\r\n`);
      response.resume();
    });
    outbound.once("error", () => socket.destroy());
    outbound.once("open", () => {
      sockets.handleUpgrade(req, socket, head, (inbound) => {
        outbound.on("message", (data, isBinary) => {
          let frame = data.toString();
          if (proxy.mode === "bad-signature" && !isBinary) {
            const message = JSON.parse(frame) as { type: string; payload: { sha256?: string } };
            if (message.type === "command.update" && tamperedSha !== undefined) {
              message.payload.sha256 = tamperedSha;
              frame = JSON.stringify(message);
            }
          }
          inbound.send(frame);
        });
        inbound.on("message", (data, isBinary) => outbound.send(data, { binary: isBinary }));
        inbound.on("close", (code) => outbound.close(code >= 4000 || code === 1000 ? code : 1000));
        outbound.on("close", (code, reason) =>
          inbound.close(code >= 4000 || code === 1000 ? code : 1000, reason.toString()),
        );
      });
    });
  });

  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = () =>
    new Promise((resolve) => {
      for (const client of sockets.clients) {
        client.terminate();
      }
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return proxy;
}
