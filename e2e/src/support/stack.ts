/**
 * @module support/stack
 * The stack most e2e files run against: rest-server, the built server (PGlite) with its first
 * admin, and the agents a test starts, all stopped after the file. `useStack()` registers the
 * vitest hooks; its fields are set once `beforeAll` has run, so read them inside tests.
 */
import { afterAll, beforeAll } from "vitest";
import type { AgentRun } from "./agent-process.js";
import { type Api, bootstrapAdmin } from "./api.js";
import { eventually } from "./eventually.js";
import { type RestServer, startRestServer } from "./rest-server.js";
import { type ServerProcess, startServerProcess } from "./server-process.js";

export interface Stack {
  rest: RestServer;
  server: ServerProcess;
  api: Api;
  /** Agents pushed here are stopped before the server. */
  agents: AgentRun[];
}

/** `serverEnv`: more of the server's environment (e.g. FLEETBACK_METRICS_TOKEN). */
export function useStack(options: { serverEnv?: Record<string, string> } = {}): Stack {
  const stack = { agents: [] as AgentRun[] } as Stack;
  beforeAll(async () => {
    stack.rest = await startRestServer();
    stack.server = await startServerProcess(options.serverEnv);
    stack.api = await bootstrapAdmin(stack.server.url, stack.server.output());
  });
  afterAll(async () => {
    await Promise.all(stack.agents.map((agent) => agent.stop()));
    await stack.server?.stop();
    await stack.rest?.stop();
  });
  return stack;
}

export const FINISHED_JOB_STATUSES = ["succeeded", "failed", "cancelled", "lost"];

/** Polls a job until its status is one of `done` (by default: finished in any way). */
export function waitJob<T extends { status: string }>(
  api: Api,
  jobId: string,
  options: { done?: string[]; timeoutMs?: number } = {},
): Promise<T> {
  const done = options.done ?? FINISHED_JOB_STATUSES;
  return eventually(
    async () => {
      const { job } = await api.get<{ job: T }>(`/api/jobs/${jobId}`);
      return done.includes(job.status) ? job : undefined;
    },
    { what: `job ${jobId} to finish`, timeoutMs: options.timeoutMs ?? 120_000 },
  );
}
