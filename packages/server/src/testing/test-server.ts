/**
 * @module testing/test-server
 * The real app and agent channel on a real port (0, so tests never collide), over createTestDeps:
 * for tests that need HTTP and WebSocket clients talking to the server the way agents and
 * browsers do.
 */
import type { AddressInfo } from "node:net";
import type { Engine } from "@fleetback/db";
import { createAdaptorServer } from "@hono/node-server";
import {
  type AgentChannel,
  type AgentChannelOptions,
  attachAgentChannel,
} from "../agent-channel/attach-agent-channel.js";
import { createApp } from "../app.js";
import type { Config } from "../config.js";
import { attachUpgradeRouter, type UpgradeSource } from "../http/upgrade-router.js";
import { attachJobStreams, type JobStreams } from "../job-stream/job-stream.js";
import { createTestDeps, type TestDeps } from "./test-deps.js";

export interface TestServer {
  /** http://127.0.0.1:<port> */
  url: string;
  /** ws://127.0.0.1:<port>/api/agents/ws */
  wsUrl: string;
  deps: TestDeps;
  channel: AgentChannel;
  jobStreams: JobStreams;
  /** Closes the channel and the server; closes the deps too when this server created them. */
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
  jobStreams?: { reauthoriseMs?: number; onAuthorised?: (status: number) => void };
}

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const deps =
    options.deps ??
    (await createTestDeps({
      ...(options.engine ? { engine: options.engine } : {}),
      ...(options.config ? { config: options.config } : {}),
    }));
  const app = createApp(deps);
  const server = createAdaptorServer({ fetch: app.fetch });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const upgrades = attachUpgradeRouter(server as UpgradeSource);
  const channel = attachAgentChannel(upgrades, deps, {
    closeGraceMs: 500,
    ...options.channel,
  });
  const { onAuthorised, ...jobStreamOptions } = options.jobStreams ?? {};
  const jobStreams = attachJobStreams(upgrades, deps, {
    authorise: async (request, env) => {
      const answer = await app.fetch(request, env);
      onAuthorised?.(answer.status);
      return answer;
    },
    ...jobStreamOptions,
  });
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}/api/agents/ws`,
    deps,
    channel,
    jobStreams,
    close() {
      closing ??= (async () => {
        await channel.close();
        await jobStreams.close();
        upgrades.detach();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          if ("closeAllConnections" in server) {
            server.closeAllConnections();
          }
        });
        if (!options.deps) {
          await deps.close();
        }
      })();
      return closing;
    },
  };
}
