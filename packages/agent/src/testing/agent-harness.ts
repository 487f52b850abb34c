/**
 * @module testing/agent-harness
 * One agent under test against the test server: real socket, real runner (recorded so argv can
 * be inspected), memory logger; plus helpers to run a job and collect everything it reported.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type AgentEnvelope,
  type CommandRun,
  createUlidGenerator,
  type PayloadOf,
  type Snapshot,
} from "@fleetback/protocol";
import { type Agent, type AgentOptions, type AgentOutcome, createAgent } from "../agent/agent.js";
import type { ProcessSpec, ResticRunner } from "../restic/runner.js";
import { createSpawnRunner } from "../restic/spawn-adapter.js";
import { createMemoryLogger, type MemoryLogger } from "./memory-logger.js";
import type { AgentPeer, TestServer } from "./test-server.js";

export const nextUlid = createUlidGenerator();

export interface Harness {
  agent: Agent;
  peer: AgentPeer;
  log: MemoryLogger;
  /** Every process the agent started, as the runner port saw it. */
  calls: ProcessSpec[];
  stateDir: string;
  outcome: Promise<AgentOutcome>;
  stop(): Promise<void>;
}

export interface HarnessOptions {
  resticCommand: string;
  parentEnv?: NodeJS.ProcessEnv;
  random?: () => number;
  agentVersion?: string;
  update?: AgentOptions["update"];
  jobTimeouts?: AgentOptions["jobTimeouts"];
  repositoryUnreachableAfterMs?: AgentOptions["repositoryUnreachableAfterMs"];
  /** The agent's config and install directories (its state dir is a fresh temp dir). */
  configDir?: string;
  installDir?: string;
}

export async function startHarness(server: TestServer, options: HarnessOptions): Promise<Harness> {
  const stateDir = await mkdtemp(join(tmpdir(), "fleetback-state-"));
  const log = createMemoryLogger();
  const calls: ProcessSpec[] = [];
  const spawnRunner = createSpawnRunner({ killGraceMs: 2_000 });
  const runner: ResticRunner = {
    run(spec) {
      calls.push(spec);
      return spawnRunner.run(spec);
    },
  };
  const agent = createAgent({
    config: { server_url: server.url, host_id: "01HOST", agent_token: "fa_test-token" },
    stateDir,
    ...(options.configDir === undefined ? {} : { configDir: options.configDir }),
    ...(options.installDir === undefined ? {} : { installDir: options.installDir }),
    resticCommand: options.resticCommand,
    identity: { hostname: "vm", os: "linux", arch: "x64" },
    agentVersion: options.agentVersion ?? "0.1.0",
    log,
    parentEnv: options.parentEnv ?? process.env,
    runner,
    random: options.random ?? (() => 0),
    update: options.update,
    jobTimeouts: options.jobTimeouts,
    repositoryUnreachableAfterMs: options.repositoryUnreachableAfterMs,
  });
  const outcome = agent.run();
  const peer = await server.nextPeer();
  await peer.next("hello");
  return {
    agent,
    peer,
    log,
    calls,
    stateDir,
    outcome,
    async stop() {
      await agent.stop();
      await outcome;
    },
  };
}

export function initCommand(): PayloadOf<"command.run"> & CommandRun {
  return { job_id: nextUlid(), kind: "init", requires_admin_creds: false };
}

/** Everything the peer received about one job, once its job.finished arrived. */
export async function jobReports(
  peer: AgentPeer,
  jobId: string,
  timeoutMs = 60_000,
): Promise<AgentEnvelope[]> {
  for (;;) {
    const finished = await peer.next("job.finished", timeoutMs);
    if (finished.payload.job_id === jobId) {
      return peer.received.filter(
        (message) => "job_id" in message.payload && message.payload.job_id === jobId,
      );
    }
  }
}

export function logLines(reports: AgentEnvelope[]): string[] {
  return reports.flatMap((message) =>
    message.type === "log.stream" ? [`${message.payload.stream}: ${message.payload.line}`] : [],
  );
}

export function finishedOf(reports: AgentEnvelope[]): PayloadOf<"job.finished"> | undefined {
  const finished = reports.find((message) => message.type === "job.finished");
  return finished?.type === "job.finished" ? finished.payload : undefined;
}

/** Sends one command and waits for everything about it, as the real-restic agent tests do. */
export function runJob(harness: Harness, job: PayloadOf<"command.run">): Promise<AgentEnvelope[]> {
  harness.peer.send("command.run", job);
  return jobReports(harness.peer, job.job_id, 120_000);
}

/** The snapshots of the latest snapshots.report (small lists come whole, in one frame). */
export function latestSnapshots(harness: Harness): Snapshot[] {
  const reports = harness.peer.received.flatMap((message) =>
    message.type === "snapshots.report" ? [message.payload] : [],
  );
  return reports.at(-1)?.snapshots ?? [];
}
