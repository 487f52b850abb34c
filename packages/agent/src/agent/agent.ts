/**
 * @module agent/agent
 * Composition of one running agent: connection, job queue, in-memory credentials and the server
 * message handlers. Every message goes out through one emit path (agent-sender.ts).
 */
import { type AgentKind, PROTOCOL_VERSION } from "@fleetback/protocol";
import type { AgentConfig } from "../config/agent-config.js";
import type { JobTimeouts } from "../config/job-timeouts.js";
import type { OpenSocket } from "../connection/agent-socket.js";
import {
  type AgentConnection,
  type ConnectionOutcome,
  createAgentConnection,
} from "../connection/connection.js";
import { createDumpStreamer, type DumpStreamer } from "../dump/dump-streamer.js";
import type { HostIdentity } from "../host-identity.js";
import { createJobHandlers } from "../jobs/job-handlers.js";
import { createJobQueue, type JobQueue } from "../jobs/job-queue.js";
import { createJobReporter, type JobReporter } from "../jobs/job-reporter.js";
import type { JobHandlers } from "../jobs/job-types.js";
import { localRepositoryProblem } from "../jobs/local-repository.js";
import type { Logger } from "../log/logger.js";
import { type CredentialStore, createCredentialStore } from "../restic/credential-store.js";
import { createToolVersionProbe, type ToolVersionProbe } from "../restic/detect-version.js";
import { createToolFlagProbe } from "../restic/flag-probe.js";
import { createGuardRecord } from "../restic/guard-record.js";
import { guardRepository } from "../restic/repository-guard.js";
import { createRestic } from "../restic/restic.js";
import type { ResticRunner } from "../restic/runner.js";
import { createSpawnRunner } from "../restic/spawn-adapter.js";
import { helloAgentDirs } from "../restore-helper/agent-dirs.js";
import { createHelperRunner } from "../restore-helper/helper-runner.js";
import { createFireLedger } from "../scheduler/fire-ledger.js";
import { createScheduler, type Scheduler } from "../scheduler/scheduler.js";
import { type Clock, systemClock } from "../time/clock.js";
import { localTimeZone } from "../time/time-zone.js";
import { systemTimers, type Timers } from "../time/timers.js";
import { createCatalogCatchUp } from "../tree/catalog-catch-up.js";
import { createCatalogSender } from "../tree/catalog-sender.js";
import { createTreeBrowser, type TreeBrowser } from "../tree/tree-browser.js";
import { updateDir } from "../update/boot-record.js";
import { downloadArtefact } from "../update/download.js";
import { nodeFileOps } from "../update/file-ops.js";
import { createUpdatePlatform } from "../update/platform.js";
import { createReleaseKeySource } from "../update/release-key.js";
import { createUpdater, type UpdaterOptions } from "../update/updater.js";
import { createAgentSender } from "./agent-sender.js";
import { createServerHandlers } from "./server-handlers.js";

export interface AgentOptions {
  config: AgentConfig;
  stateDir: string;
  /** Where agent.json lives, to pin the release key fetched on first use; absent keeps it in memory. */
  configDir?: string;
  /** Where the agent is installed (/opt/fleetback-agent); with the others, never a restore target. */
  installDir?: string;
  /** restic binary: FLEETBACK_RESTIC or `restic` on PATH. */
  resticCommand: string;
  identity: HostIdentity;
  agentVersion: string;
  /** What runs this agent (hello.agent_kind); updates come as the same kind. Default bundle. */
  agentKind?: AgentKind;
  log: Logger;
  /** The agent's own environment; repository and provider variables in it are ignored. */
  parentEnv: NodeJS.ProcessEnv;
  runner?: ResticRunner;
  /**
   * The restore helper's socket (FLEETBACK_RESTORE_SOCKET, set by the installed unit): restores
   * run there, since this process may write only its own directories. Absent: restic runs here.
   */
  restoreSocket?: string;
  clock?: Clock;
  timers?: Timers;
  random?: () => number;
  openSocket?: OpenSocket;
  /** The longest each job kind may run (FLEETBACK_JOB_TIMEOUT_<KIND>); absent: the defaults. */
  jobTimeouts?: JobTimeouts;
  /**
   * How long restic may fail to reach the repository before a job stops and says it is
   * unreachable (FLEETBACK_REPOSITORY_UNREACHABLE_AFTER; restic/unreachable-watch.ts), and how
   * long a copy waits for its mirror to open; null turns both off; absent: REPOSITORY_UNREACHABLE_MS.
   */
  repositoryUnreachableAfterMs?: number | null;
  /**
   * Whether a backup ends by building its new snapshot's browse index (tree-browser.ts
   * `prebuild`): one more full `restic ls` of the snapshot and ~45 bytes of disk a file, for a
   * restore browser that answers in milliseconds. FLEETBACK_TREE_INDEX_AFTER_BACKUP=0 turns it
   * off, and with it the file catalogue (protocol 15), which is read from that index. Default on.
   */
  treeIndexAfterBackup?: boolean;
  /** Replaces the job handlers (tests); defaults to this version's set. */
  jobHandlers?: JobHandlers;
  /** Replaces parts of self-update (tests); defaults to the real ones under `<stateDir>/update`. */
  update?: Partial<Pick<UpdaterOptions, "platform" | "fs" | "download" | "releaseKey">>;
}

/** How run() ended: the connection's outcome, or a verified update waiting for a restart. */
export type AgentOutcome = ConnectionOutcome | { kind: "restart_for_update"; version: string };

export interface Agent {
  /** Runs until stop(), a fatal close or an update; running jobs are cancelled on the way out. */
  run(): Promise<AgentOutcome>;
  /** Cancels running and queued jobs (reporting them) and then closes the connection. */
  stop(): Promise<void>;
  readonly queue: JobQueue;
  readonly scheduler: Scheduler;
  readonly credentials: CredentialStore;
  readonly toolVersion: ToolVersionProbe;
  readonly tree: TreeBrowser;
  readonly dumps: DumpStreamer;
}

/** Whatever way a job ends (run, refused, cancelled before it started), its own credentials go. */
function dropsJobCredentials(reporter: JobReporter, credentials: CredentialStore): JobReporter {
  return {
    ...reporter,
    finished(jobId, outcome) {
      credentials.dropJob(jobId);
      reporter.finished(jobId, outcome);
    },
  };
}

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
  // Jobs run restic through the repository guard; its verdicts reach the running job's outcome.
  const guardRecord = createGuardRecord();
  const guard = {
    timers,
    clock,
    record: guardRecord,
    ...(options.repositoryUnreachableAfterMs === undefined
      ? {}
      : { unreachableAfterMs: options.repositoryUnreachableAfterMs }),
  };
  const restoreVia =
    options.restoreSocket === undefined
      ? undefined
      : {
          restic: guardRepository(
            createRestic({
              runner: createHelperRunner(options.restoreSocket),
              command: options.resticCommand,
              stateDir: options.stateDir,
              parentEnv: options.parentEnv,
            }),
            { ...guard, direct: restic },
          ),
        };
  const toolVersion = createToolVersionProbe(restic);
  const credentials = createCredentialStore();
  // Never data (issue 33): not backed up, restored, listed or downloaded, nor a restore target.
  const agentDirs = [options.stateDir, options.configDir, options.installDir].filter(
    (dir): dir is string => dir !== undefined,
  );
  const tree = createTreeBrowser({
    restic,
    credentials,
    stateDir: options.stateDir,
    agentDirs,
    clock,
    log,
  });
  const sender = createAgentSender(log);
  const { send, outbox } = sender;
  let connection: AgentConnection | undefined;
  let stopped = false;
  let restartFor: string | undefined;

  // `catalog.delta` is not queued: an agent that cannot send simply gets no ack and keeps its base.
  const catalog = createCatalogSender({
    stateDir: options.stateDir,
    send: (delta) => send("catalog.delta", delta),
    timers,
    log,
  });
  // After a backup: each snapshot owed, in order, through an index of its own (never pinned here).
  const catalogue = createCatalogCatchUp({
    stateDir: options.stateDir,
    index: (snapshotId, signal) => tree.prebuild(snapshotId, signal, { pin: false }),
    send: catalog.send,
    log,
  });

  const queue = createJobQueue({
    handlers:
      options.jobHandlers ??
      createJobHandlers({
        restic: guardRepository(restic, guard),
        guardRecord,
        toolVersion,
        toolFlags: createToolFlagProbe({ restic, stateDir: options.stateDir, log }),
        credentials,
        runner,
        restoreVia,
        stateDir: options.stateDir,
        agentDirs,
        repositoryProblem: localRepositoryProblem,
        parentEnv: options.parentEnv,
        timers,
        clock,
        log,
        reportSnapshots: (report) => send("snapshots.report", report),
        reportStats: (stats) => send("repo.stats", stats),
        ...(options.treeIndexAfterBackup === false ? {} : { prebuildTreeIndex: tree.prebuild, catalogue }),
        // A mirror that does not open is as unreachable as a repository that stops answering.
        ...(options.repositoryUnreachableAfterMs === undefined
          ? {}
          : { mirrorProbeTimeoutMs: options.repositoryUnreachableAfterMs }),
      }),
    reporter: dropsJobCredentials(
      createJobReporter((type, payload) => send(type, payload), clock),
      credentials,
    ),
    log,
    timeouts: options.jobTimeouts,
    timers,
  });
  const fireLedger = createFireLedger();
  const scheduler = createScheduler({
    timers,
    clock,
    log,
    // Not through the outbox: the ledger keeps the latest firing per schedule and sends it again
    // when the next connection is ready, if it was missed or may not have been read.
    fire: (payload) => {
      const sent = send("schedule.fire", payload);
      fireLedger.record(payload, sent, clock.now());
      return sent;
    },
    ack: (version) => send("schedule.ack", { version }),
  });
  const fs = options.update?.fs ?? nodeFileOps;
  const agentKind = options.agentKind ?? "bundle";
  const timeZone = localTimeZone();
  const updater = createUpdater({
    selfVersion: options.agentVersion,
    selfKind: agentKind,
    serverUrl: options.config.server_url,
    token: options.config.agent_token,
    tlsPin: options.config.tls_pin_sha256,
    platform: options.update?.platform ?? createUpdatePlatform({ dir: updateDir(options.stateDir), fs }),
    fs,
    download: options.update?.download ?? downloadArtefact,
    releaseKey:
      options.update?.releaseKey ??
      createReleaseKeySource({ config: options.config, configDir: options.configDir }),
    send: (result) => send("update.result", result),
    jobsIdle: () => queue.idle(),
    restart: (version) => {
      restartFor = version;
      void agent.stop();
    },
    clock,
    timers,
    log,
  });
  // Chunks are not queued: a download belongs to the connection it was asked on.
  const dumps = createDumpStreamer({
    restic,
    credentials,
    agentDirs,
    log,
    send: (type, payload) => send(type, payload),
  });
  const handlers = createServerHandlers({
    credentials,
    queue,
    scheduler,
    log,
    reply: (type, payload, requestId) => send(type, payload, requestId),
    tree,
    dumps,
    update: (payload) => updater.handle(payload),
    catalogAck: (payload) => catalog.ack(payload),
  });

  const agent: Agent = {
    queue,
    scheduler,
    credentials,
    toolVersion,
    tree,
    dumps,
    async run() {
      const toolVersionText = await toolVersion.text();
      if (stopped) {
        return restartFor === undefined
          ? { kind: "stopped" }
          : { kind: "restart_for_update", version: restartFor };
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
          agent_kind: agentKind,
          ...(timeZone === undefined ? {} : { time_zone: timeZone }),
          agent_dirs: helloAgentDirs(agentDirs),
          ...options.identity,
        },
        // Queued jobs count: the server holds them as active, and they will still run.
        runningJobIds: () => [...new Set([...queue.activeJobIds(), ...outbox.unreportedJobIds()])],
        handlers,
        onReady: () => {
          // Downloads asked on an earlier connection have nobody left to read them.
          void dumps.cancelAll();
          sender.drain();
          fireLedger.keepOnly(new Set(scheduler.armed()));
          for (const payload of fireLedger.replay(clock.now())) {
            log.info("schedule firing sent again on the new connection", { ...payload });
            send("schedule.fire", payload);
          }
        },
        onAccepted: () => {
          updater.onAccepted().catch((cause: unknown) => {
            log.error("could not record the accepted connection for the update", { error: String(cause) });
          });
        },
        log,
        timers,
        random: options.random,
        openSocket: options.openSocket,
      });
      sender.attach(connection.sendFrame);
      const outcome = await connection.run();
      scheduler.stop();
      await Promise.all([queue.cancelAll(), tree.stop(), dumps.cancelAll()]);
      return restartFor === undefined || outcome.kind !== "stopped"
        ? outcome
        : { kind: "restart_for_update", version: restartFor };
    },
    async stop() {
      stopped = true;
      scheduler.stop();
      await Promise.all([queue.cancelAll(), tree.stop(), dumps.cancelAll()]);
      connection?.stop();
    },
  };
  return agent;
}
