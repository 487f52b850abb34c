/**
 * @module http/listen
 * Binds the HTTP(S) socket before the app exists: with port 0 the base URL is only known once
 * listening, and the config is computed once from it. A request arriving before `serve` waits
 * for the app instead of failing.
 */
import { readFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import {
  createAdaptorServer,
  type Http2Bindings,
  type HttpBindings,
  type ServerType,
} from "@hono/node-server";
import { serverOptions } from "./request-limits.js";

export type FetchHandler = (
  request: Request,
  env: HttpBindings | Http2Bindings,
) => Response | Promise<Response>;

export interface ListenOptions {
  host: string;
  port: number;
  tls?: { certFile: string; keyFile: string } | undefined;
}

export interface Listening {
  server: ServerType;
  /** The real port, also when 0 was asked for. */
  port: number;
  /** Hands every request, including those that arrived before, to `fetch`. */
  serve(fetch: FetchHandler): void;
}

export async function listen(options: ListenOptions): Promise<Listening> {
  let serve: (fetch: FetchHandler) => void = () => undefined;
  const served = new Promise<FetchHandler>((resolve) => {
    serve = resolve;
  });
  const fetch: FetchHandler = (request, env) => served.then((handler) => handler(request, env));
  const tlsOptions = options.tls
    ? { cert: await readFile(options.tls.certFile), key: await readFile(options.tls.keyFile) }
    : undefined;
  const server = tlsOptions
    ? createAdaptorServer({
        fetch,
        createServer: (await import("node:https")).createServer,
        serverOptions: { ...serverOptions(), ...tlsOptions },
      })
    : createAdaptorServer({ fetch, serverOptions: serverOptions() });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return { server, port: (server.address() as AddressInfo).port, serve };
}
