/**
 * @module agent/agent
 * Composition of one running agent: connection, job queue, in-memory credentials and the server
 * message handlers. Jobs report through one emit path: straight onto the socket when it is up,
 * into the outbox when it is not, so a job that finishes during a reconnect is still reported.
 */
import { type AgentMessageType, encode, type PayloadOf, PROTOCOL_VERSION } from "@fleetback/protocol";
import type { AgentConfig } from "../config/agent-config.js";
import type { OpenSocket } from "../connection/agent-socket.js";
import {
  type AgentConnection,
  type ConnectionOutcome,
  createAgentConnection,
} from "../connection/connection.js";
import { createOutbox } from "../connection/outbox.js";
import type { HostIdentity } from "../host-identity.js";
import { createJobHandlers } from "../jobs/job-handlers.js";
import { createJobQueue, type JobQueue } from "../jobs/job-queue.js";
import { createJobReporter } from "../jobs/job-reporter.js";
import type { JobHandlers } from "../jobs/job-types.js";
import type { Logger } from "../log/logger.js";
import { createToolVersionProbe, type ToolVersionProbe } from "../restic/detect-version.js";
import { createToolFlagProbe } from "../restic/flag-probe.js";
import { createRestic } from "../restic/restic.js";
import type { ResticRunner } from "../restic/runner.js";
import { createSpawnRunner } from "../restic/spawn-adapter.js";
import { createScheduler, type Scheduler } from "../scheduler/scheduler.js";
import { type Clock, systemClock } from "../time/clock.js";
import { systemTimers, type Timers } from "../time/timers.js";
import { createTreeBrowser, type TreeBrowser } from "../tree/tree-browser.js";
import { type CredentialStore, createCredentialStore } from "./credential-store.js";
import { createServerHandlers } from "./server-handlers.js";

export interface AgentOptions {
  config: AgentConfig;
  stateDir: string;
  /** restic binary: FLEETBACK_RESTIC or `restic` on PATH. */
  resticCommand: string;
  identity: HostIdentity;
  agentVersion: string;
  log: Logger;
  /** The agent's own environment; repository and provider variables in it are ignored. */
  parentEnv: NodeJS.ProcessEnv;
  runner?: ResticRunner;
  clock?: Clock;
  timers?: Timers;
  random?: () => number;
  openSocket?: OpenSocket;
  /** Replaces the job handlers (tests); defaults to this version's set. */
  jobHandlers?: JobHandlers;
}

export interface Agent {
  /** Runs until stop() or a fatal close; running jobs are cancelled on the way out. */
  run(): Promise<ConnectionOutcome>;
  /** Cancels running and queued jobs (reporting them) and then closes the connection. */
  stop(): Promise<void>;
  readonly queue: JobQueue;
  readonly scheduler: Scheduler;
  readonly credentials: CredentialStore;
  readonly toolVersion: ToolVersionProbe;
  readonly tree: TreeBrowser;
}

/**
 * Kept in the outbox while disconnected. `snapshots.report` too: it replaces the server's list;
 * and `repo.stats`, whose `last_check_status` or `last_prune_at` would otherwise be lost.
 */
const QUEUED_MESSAGES: ReadonlySet<string> = new Set([
  "job.started",
  "job.progress",
  "job.finished",
  "log.stream",
  "snapshots.report",
  "repo.stats",
]);

export function createAgent(options: AgentOptions): Agent {
  const { log } = options;
  const clock = options.clock ?? systemClock;
  const timers = options.timers ?? systemTimers;
  const runner = options.runner ?? createSpawnRunner();
  const restic = createRestic({
    runner,
    command: options.resticCommand,
    stateDir: options.stateDir,
    parentEnv: options.parentEnv,
  });
  const toolVersion = createToolVersionProbe(restic);
  const credentials = createCredentialStore();
  const tree = createTreeBrowser({ restic, credentials, stateDir: options.stateDir, clock, log });
  const outbox = createOutbox();
  let connection: AgentConnection | undefined;
  let stopped = false;

  /** True when the frame went out or waits in the outbox; false when it was dropped. */
  const send = <K extends AgentMessageType>(type: K, payload: PayloadOf<K>, id?: string): boolean => {
    let frame: string;
    try {
      frame = encode(type, payload, id);
    } catch (cause) {
      log.error("refused to send an invalid message", { type, error: String(cause) });
      return false;
    }
    const queued = QUEUED_MESSAGES.has(type);
    // Queued kinds keep their order behind what already waits; the others only need a live socket.
    if ((!queued || outbox.size === 0) && connection?.sendFrame(frame)) {
      return true;
    }
    if (!queued) {
      return false;
    }
    const jobId = "job_id" in payload && typeof payload.job_id === "string" ? payload.job_id : undefined;
    outbox.push(frame, type, jobId);
    if (connection) {
      outbox.drain(connection.sendFrame);
    }
    return true;
  };

  const queue = createJobQueue({
    handlers:
      options.jobHandlers ??
      createJobHandlers({
        restic,
        toolVersion,
        toolFlags: createToolFlagProbe({ restic, stateDir: options.stateDir, log }),
        credentials,
        runner,
        parentEnv: options.parentEnv,
        timers,
        clock,
        log,
        reportSnapshots: (report) => send("snapshots.report", report),
        reportStats: (stats) => send("repo.stats", stats),
      }),
    reporter: createJobReporter((type, payload) => send(type, payload), clock),
    log,
  });
  const scheduler = createScheduler({
    timers,
    clock,
    log,
    // A tick with no live connection is skipped: schedule.fire never waits in the outbox.
    fire: (payload) => send("schedule.fire", payload),
    ack: (version) => send("schedule.ack", { version }),
  });
  const handlers = createServerHandlers({
    credentials,
    queue,
    scheduler,
    log,
    reply: (type, payload, requestId) => send(type, payload, requestId),
    agentVersion: options.agentVersion,
    tree,
  });

  return {
    queue,
    scheduler,
    credentials,
    toolVersion,
    tree,
    async run() {
      const toolVersionText = await toolVersion.text();
      if (stopped) {
        return { kind: "stopped" };
      }
      if (toolVersionText === "") {
        log.warn("restic was not found or did not report its version; jobs will fail", {
          restic: options.resticCommand,
        });
      }
      connection = createAgentConnection({
        target: {
          serverUrl: options.config.server_url,
          token: options.config.agent_token,
          tlsPin: options.config.tls_pin_sha256,
        },
        identity: {
          agent_version: options.agentVersion,
          tool_version: toolVersionText,
          protocol_version: PROTOCOL_VERSION,
          ...options.identity,
        },
        // Queued jobs count: the server holds them as active, and they will still run.
        runningJobIds: () => [...new Set([...queue.activeJobIds(), ...outbox.unreportedJobIds()])],
        handlers,
        onReady: () => {
          if (connection) {
            outbox.drain(connection.sendFrame);
          }
        },
        log,
        timers,
        random: options.random,
        openSocket: options.openSocket,
      });
      const outcome = await connection.run();
      scheduler.stop();
      await Promise.all([queue.cancelAll(), tree.stop()]);
      return outcome;
    },
    async stop() {
      stopped = true;
      scheduler.stop();
      await Promise.all([queue.cancelAll(), tree.stop()]);
      connection?.stop();
    },
  };
}
