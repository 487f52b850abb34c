/**
 * @module support/tcp-proxy
 * The load balancer in front of two replicas, reduced to what the replica tests need: every TCP
 * connection (HTTP and WebSocket alike) goes to the first backend, in the test's order, that
 * accepts it. A backend that is down (killed) refuses, and the next one gets the connection, as a
 * proxy's health-checked upstream pool does; when a backend dies, its relayed sockets are cut.
 * `pause()` models the far side going away (a database stopped): relayed sockets are cut and the
 * port refuses connections until `resume()`.
 */
import { connect, createServer, type Server, type Socket } from "node:net";

export interface TcpProxy {
  url: string;
  /** Backends ("127.0.0.1:port") in order of preference; the test may reorder them. */
  backends: string[];
  /** Which backend each accepted connection went to, in order. */
  routed: string[];
  /** Cuts every relayed connection and stops listening (connections are refused). */
  pause(): Promise<void>;
  /** Listens again on the same port. */
  resume(): Promise<void>;
  close(): Promise<void>;
}

function dial(backends: string[], index: number, client: Socket, routed: string[], open: Set<Socket>): void {
  const backend = backends[index];
  if (backend === undefined) {
    client.destroy();
    return;
  }
  const [host, port] = backend.split(":");
  const upstream = connect({ host: host ?? "127.0.0.1", port: Number(port) });
  open.add(upstream);
  let connected = false;
  upstream.once("connect", () => {
    connected = true;
    routed.push(backend);
    client.pipe(upstream);
    upstream.pipe(client);
    client.resume();
  });
  upstream.on("error", () => {
    if (!connected) {
      open.delete(upstream);
      dial(backends, index + 1, client, routed, open);
    }
  });
  upstream.on("close", () => {
    open.delete(upstream);
    if (connected) {
      client.destroy();
    }
  });
  client.on("close", () => upstream.destroy());
  client.on("error", () => upstream.destroy());
}

export async function startTcpProxy(port: number, backends: string[]): Promise<TcpProxy> {
  const open = new Set<Socket>();
  const routed: string[] = [];
  const server: Server = createServer((client) => {
    client.pause();
    open.add(client);
    client.on("close", () => open.delete(client));
    dial(proxy.backends, 0, client, routed, open);
  });
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        server.off("error", reject);
        resolve();
      });
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const socket of open) {
        socket.destroy();
      }
      if (!server.listening) {
        resolve();
        return;
      }
      server.close(() => resolve());
    });
  const proxy: TcpProxy = {
    url: `http://127.0.0.1:${port}`,
    backends,
    routed,
    pause: stop,
    resume: listen,
    close: stop,
  };
  await listen();
  return proxy;
}
