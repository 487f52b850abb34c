/**
 * @module testing/test-server
 * The production runtime (runtime.ts) on a real port (0, so tests never collide), over
 * createTestDeps: for tests that need HTTP and WebSocket clients talking to the server the way
 * agents and browsers do. Tickers are off unless asked for: these tests drive time with a manual
 * clock and run ticks themselves, and a ticker firing on the wall clock mid-test would race them.
 */
import type { Engine } from "@fleetback/db";
import type { AgentChannel, AgentChannelOptions } from "../agent-channel/attach-agent-channel.js";
import type { Config } from "../config.js";
import { listen } from "../http/listen.js";
import type { JobStreams } from "../job-page/job-stream.js";
import { type RuntimeOptions, startRuntime } from "../runtime.js";
import { createTestDeps, type TestDeps } from "./test-deps.js";

export interface TestServer {
  /** http://127.0.0.1:<port> */
  url: string;
  /** ws://127.0.0.1:<port>/api/agents/ws */
  wsUrl: string;
  deps: TestDeps;
  channel: AgentChannel;
  jobStreams: JobStreams;
  /** Closes the runtime and the server; closes the deps too when this server created them. */
  close(): Promise<void>;
}

export interface TestServerOptions {
  /** Shared deps (e.g. several servers on one database); created, and later closed, when absent. */
  deps?: TestDeps;
  engine?: Engine;
  /** Settings over the test defaults, for deps this server creates. */
  config?: Partial<Config>;
  channel?: AgentChannelOptions;
  /** `onAuthorised` hears the status of every (re-)authorisation of a job stream, in order. */
  jobStreams?: RuntimeOptions["jobStreams"];
  /** The production tickers, at their periods unless shortened here; off when absent. */
  tickers?: RuntimeOptions["tickers"];
}

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const deps =
    options.deps ??
    (await createTestDeps({
      ...(options.engine ? { engine: options.engine } : {}),
      ...(options.config ? { config: options.config } : {}),
    }));
  const listening = await listen({ host: "127.0.0.1", port: 0 });
  const runtime = startRuntime(listening, deps, {
    channel: { closeGraceMs: 500, ...options.channel },
    ...(options.jobStreams ? { jobStreams: options.jobStreams } : {}),
    tickers: options.tickers ?? false,
    dropConnections: "all",
    ...(options.deps ? {} : { release: () => deps.close() }),
  });
  return {
    url: `http://127.0.0.1:${listening.port}`,
    wsUrl: `ws://127.0.0.1:${listening.port}/api/agents/ws`,
    deps,
    channel: runtime.channel,
    jobStreams: runtime.jobStreams,
    close: runtime.close,
  };
}
