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
  type CommandRunBackup,
  type CommandRunCheck,
  type CommandRunRestore,
  type CredentialSlot,
  createUlidGenerator,
  type PayloadOf,
  type Repository,
  type Snapshot,
  type TreeListResult,
} from "@fleetback/protocol";
import { afterEach, expect } from "vitest";
import { type Agent, type AgentOptions, type AgentOutcome, createAgent } from "../agent/agent.js";
import type { ProcessSpec, ResticRunner } from "../restic/runner.js";
import { createSpawnRunner } from "../restic/spawn-adapter.js";
import { createSleepingRestic, sleepingPids } from "./fake-restic.js";
import { createMemoryLogger, type MemoryLogger } from "./memory-logger.js";
import { isRunning, waitUntil } from "./processes.js";
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
  /** How long runJob waits for a job's reports unless told otherwise. */
  reportWaitMs: number;
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
  /** runJob's hang guard for this agent's jobs; 120 s when absent. */
  reportWaitMs?: number;
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
    reportWaitMs: options.reportWaitMs ?? 120_000,
    async stop() {
      await agent.stop();
      await outcome;
    },
  };
}

/**
 * Agents for the tests of the calling file: the returned function starts one against `server()`,
 * and each is stopped after the test that started it, while the server still listens (vitest runs
 * after-hooks in reverse, and the file called useTestServer first).
 */
export function useHarness(server: () => TestServer): (options: HarnessOptions) => Promise<Harness> {
  const started: Harness[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((harness) => harness.stop()));
  });
  return async (options) => {
    const harness = await startHarness(server(), options);
    started.push(harness);
    return harness;
  };
}

export function initCommand(): PayloadOf<"command.run"> & CommandRun {
  return { job_id: nextUlid(), kind: "init", requires_admin_creds: false };
}

export function backupCommand(
  includes: string[],
  overrides: Partial<CommandRunBackup> = {},
): CommandRunBackup {
  return {
    job_id: nextUlid(),
    kind: "backup",
    requires_admin_creds: false,
    includes,
    excludes: [],
    tag: "docs",
    ...overrides,
  };
}

export function checkCommand(check: CommandRunCheck["check"] = {}): CommandRunCheck {
  return { job_id: nextUlid(), kind: "check", requires_admin_creds: false, check };
}

/**
 * A restore; by default to a new directory, `$HOME/fleetback-restore/<job id>/`, as the server
 * words one.
 */
export function restoreCommand(
  snapshot_id: string,
  paths: string[],
  where: Partial<Pick<CommandRunRestore["restore"], "in_place" | "target_dir">> = {},
): CommandRunRestore {
  const job_id = nextUlid();
  return {
    job_id,
    kind: "restore",
    requires_admin_creds: false,
    restore: {
      snapshot_id,
      paths,
      in_place: false,
      target_dir: `$HOME/fleetback-restore/${job_id}/`,
      ...where,
    },
  };
}

/** Where a local repository may be created: `<fresh temp dir>/repo`, which does not exist yet. */
export async function tempRepository(prefix = "fleetback-repo-"): Promise<string> {
  return join(await mkdtemp(join(tmpdir(), prefix)), "repo");
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
export function runJob(
  harness: Harness,
  job: PayloadOf<"command.run">,
  timeoutMs = harness.reportWaitMs,
): Promise<AgentEnvelope[]> {
  harness.peer.send("command.run", job);
  return jobReports(harness.peer, job.job_id, timeoutMs);
}

/** Pushes `repository` to the repo slot and runs init there, as most real-restic tests begin. */
export function initRepository(harness: Harness, repository: Repository): Promise<AgentEnvelope[]> {
  harness.peer.send("config.update", { slot: "repo", repository });
  return runJob(harness, initCommand());
}

/** A fresh local repository (tempRepository) pushed to the repo slot and initialised; its path. */
export async function initTempRepository(
  harness: Harness,
  password: string,
  prefix?: string,
): Promise<string> {
  const url = await tempRepository(prefix);
  expect(finishedOf(await initRepository(harness, { url, password }))).toMatchObject({ status: "succeeded" });
  return url;
}

/** Asks for one directory listing and waits for the answer to that very request. */
export function treeList(
  harness: Harness,
  snapshot_id: string,
  path: string,
  timeoutMs = 60_000,
): Promise<TreeListResult> {
  const id = nextUlid();
  harness.peer.send("tree.list", { snapshot_id, path }, id);
  return harness.peer.until(() => {
    const reply = harness.peer.received.find(
      (message) => message.type === "tree.list.result" && message.id === id,
    );
    return reply?.type === "tree.list.result" ? reply.payload : undefined;
  }, timeoutMs);
}

/** The snapshots of the latest snapshots.report (small lists come whole, in one frame). */
export function latestSnapshots(harness: Harness): Snapshot[] {
  const reports = harness.peer.received.flatMap((message) =>
    message.type === "snapshots.report" ? [message.payload] : [],
  );
  return reports.at(-1)?.snapshots ?? [];
}

/**
 * Runs `job` on an agent whose restic is a sleeping stand-in (testing/fake-restic.ts), with a
 * repository in `slot`, and cancels it once the stand-in and its child run: the job must end
 * cancelled and take both processes with it. Everything the server received, and the job's reports.
 */
export async function cancelOnSleepingRestic(
  server: TestServer,
  slot: CredentialSlot,
  job: PayloadOf<"command.run">,
): Promise<{ reports: AgentEnvelope[]; received: AgentEnvelope[] }> {
  const fake = await createSleepingRestic();
  const harness = await startHarness(server, { resticCommand: fake.path });
  try {
    harness.peer.send("config.update", { slot, repository: { url: "/tmp/unused", password: "pw-cancel" } });
    harness.peer.send("command.run", job);
    const pids = await sleepingPids(fake.pidFile);
    expect(pids.every(isRunning)).toBe(true);
    harness.peer.send("command.cancel", { job_id: job.job_id });
    const reports = await jobReports(harness.peer, job.job_id);
    expect(finishedOf(reports)).toMatchObject({ job_id: job.job_id, status: "cancelled" });
    await waitUntil(() => !pids.some(isRunning));
    return { reports, received: harness.peer.received };
  } finally {
    await harness.stop();
  }
}
