/**
 * @module testing/http-stub
 * A tiny node:http server on port 0 standing in for the server's agent-facing HTTP endpoints:
 * each test answers requests with its own function and inspects what the agent sent.
 */
import { createServer, type Server } from "node:http";
import { afterEach } from "vitest";

export interface StubRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

export interface StubAnswer {
  status: number;
  body?: unknown;
}

export interface HttpStub {
  url: string;
  readonly requests: StubRequest[];
  stop(): Promise<void>;
}

export function portOf(server: { address(): ReturnType<Server["address"]> }): number {
  const address = server.address();
  if (address === null || typeof address === "string") {
    throw new Error("the server has no TCP address");
  }
  return address.port;
}

export async function startHttpStub(answer: (request: StubRequest) => StubAnswer): Promise<HttpStub> {
  const requests: StubRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const request: StubRequest = {
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body: text === "" ? undefined : JSON.parse(text),
      };
      requests.push(request);
      const { status, body } = answer(request);
      res
        .writeHead(status, { "content-type": "application/json" })
        .end(body === undefined ? "" : JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${portOf(server)}`,
    requests,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Stubs for the tests of the calling file: the returned function starts one, and each is stopped
 * after the test that started it.
 */
export function useHttpStub(): (answer: (request: StubRequest) => StubAnswer) => Promise<HttpStub> {
  const started: HttpStub[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((stub) => stub.stop()));
  });
  return async (answer) => {
    const stub = await startHttpStub(answer);
    started.push(stub);
    return stub;
  };
}
