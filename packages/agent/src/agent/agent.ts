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
import { createRestic } from "../restic/restic.js";
import type { ResticRunner } from "../restic/runner.js";
import { createSpawnRunner } from "../restic/spawn-adapter.js";
import { type Clock, systemClock } from "../time/clock.js";
import type { Timers } from "../time/timers.js";
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
  readonly credentials: CredentialStore;
  readonly toolVersion: ToolVersionProbe;
}

const JOB_MESSAGES: ReadonlySet<string> = new Set([
  "job.started",
  "job.progress",
  "job.finished",
  "log.stream",
]);

export function createAgent(options: AgentOptions): Agent {
  const { log } = options;
  const clock = options.clock ?? systemClock;
  const restic = createRestic({
    runner: options.runner ?? createSpawnRunner(),
    command: options.resticCommand,
    stateDir: options.stateDir,
    parentEnv: options.parentEnv,
  });
  const toolVersion = createToolVersionProbe(restic);
  const credentials = createCredentialStore();
  const outbox = createOutbox();
  let connection: AgentConnection | undefined;
  let stopped = false;

  const send = <K extends AgentMessageType>(type: K, payload: PayloadOf<K>, id?: string) => {
    let frame: string;
    try {
      frame = encode(type, payload, id);
    } catch (cause) {
      log.error("refused to send an invalid message", { type, error: String(cause) });
      return;
    }
    if (outbox.size === 0 && connection?.sendFrame(frame)) {
      return;
    }
    if (JOB_MESSAGES.has(type)) {
      const jobId = "job_id" in payload && typeof payload.job_id === "string" ? payload.job_id : undefined;
      outbox.push(frame, type, jobId);
      if (connection) {
        outbox.drain(connection.sendFrame);
      }
    }
  };

  const queue = createJobQueue({
    handlers: options.jobHandlers ?? createJobHandlers({ restic, toolVersion, credentials }),
    reporter: createJobReporter((type, payload) => send(type, payload), clock),
    log,
  });
  const handlers = createServerHandlers({
    credentials,
    queue,
    log,
    reply: (type, payload, requestId) => send(type, payload, requestId),
    agentVersion: options.agentVersion,
  });

  return {
    queue,
    credentials,
    toolVersion,
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
        timers: options.timers,
        random: options.random,
        openSocket: options.openSocket,
      });
      const outcome = await connection.run();
      await queue.cancelAll();
      return outcome;
    },
    async stop() {
      stopped = true;
      await queue.cancelAll();
      connection?.stop();
    },
  };
}
