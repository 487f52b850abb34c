/**
 * @module runtime
 * The one place that starts and stops the server's services on a listening socket: the app, the
 * upgrade router with the agent channel and job streams, the job reports the channel feeds, and
 * the tickers. Production (server.ts) and the test server both run it; tests only turn tickers
 * off or shorten timings by option. `close()` stops everything in the order its work needs.
 */
import {
  type AgentChannel,
  type AgentChannelOptions,
  attachAgentChannel,
} from "./agent-channel/attach-agent-channel.js";
import { holdIfAnomalous } from "./anomaly/anomaly-hold.js";
import { createApp } from "./app.js";
import type { AppDeps } from "./app-deps.js";
import type { Listening } from "./http/listen.js";
import { attachUpgradeRouter, type UpgradeSource } from "./http/upgrade-router.js";
import type { LocalHub } from "./hub/local-hub.js";
import { attachJobStreams, type JobStreamOptions, type JobStreams } from "./job-page/job-stream.js";
import { createServerJobReports } from "./jobs/job-reports.js";
import { createBackupCopies } from "./mirror/mirror-copy.js";
import { upkeepMirrorAfter } from "./mirror/mirror-upkeep.js";
import { type ServerTickerOptions, startServerTickers } from "./server-tickers.js";

export type App = ReturnType<typeof createApp>;

/** The agent channel feeds the in-process hub, so the runtime needs that implementation. */
export type RuntimeDeps = AppDeps & { hub: LocalHub };

export interface RuntimeOptions {
  /** Timings of the agent channel and of the job reports it feeds (timers, log batching). */
  channel?: AgentChannelOptions;
  /** `onAuthorised` hears the status of every (re-)authorisation of a job stream, in order. */
  jobStreams?: Pick<JobStreamOptions, "reauthoriseMs" | "timers"> & {
    onAuthorised?: (status: number) => void;
  };
  /** `false` starts none, for tests that run ticks themselves; production periods by default. */
  tickers?: ServerTickerOptions | false;
  /**
   * On close, production lets requests in flight finish and drops only idle connections; tests
   * drop all, so a client's kept-alive or stuck request cannot hold the close open.
   */
  dropConnections?: "idle" | "all";
  /** Runs last in close(), once nothing can use them: closes what the caller opened for the deps. */
  release?: () => Promise<void>;
}

export interface Runtime {
  app: App;
  channel: AgentChannel;
  jobStreams: JobStreams;
  close(): Promise<void>;
}

export function startRuntime(listening: Listening, deps: RuntimeDeps, options: RuntimeOptions = {}): Runtime {
  const { server } = listening;
  const app = createApp(deps);
  listening.serve(app.fetch);

  // ServerType's HTTP/2 members type 'upgrade' differently; node:http and node:https servers emit it.
  const upgrades = attachUpgradeRouter(server as UpgradeSource);
  const channelOptions = options.channel ?? {};
  const backupCopies = createBackupCopies(deps);
  const reports = createServerJobReports(deps, {
    afterSuccess: async (hostId, job, summary) => {
      if (job.kind !== "backup") {
        return upkeepMirrorAfter(deps, hostId, job);
      }
      // Judged before the mirror copy starts: a hold it opens is in place before anything else runs.
      await holdIfAnomalous(deps, hostId, job.id);
      return backupCopies.afterBackup(hostId, job.id, summary);
    },
    afterSnapshots: (hostId) => backupCopies.afterSnapshots(hostId),
    ...(channelOptions.timers ? { timers: channelOptions.timers } : {}),
    logFlushIntervalMs: channelOptions.logFlushIntervalMs,
    logBatchLines: channelOptions.logBatchLines,
  });
  const channel = attachAgentChannel(upgrades, deps, reports, channelOptions);
  const { onAuthorised, ...jobStreamOptions } = options.jobStreams ?? {};
  const jobStreams = attachJobStreams(upgrades, deps, {
    authorise: async (request, env) => {
      const answer = await app.fetch(request, env);
      onAuthorised?.(answer.status);
      return answer;
    },
    ...jobStreamOptions,
  });
  const tickers = options.tickers === false ? undefined : startServerTickers(deps, options.tickers);

  let closing: Promise<void> | undefined;
  return {
    app,
    channel,
    jobStreams,
    close() {
      closing ??= (async () => {
        // Each step's time at debug level: a slow shutdown says where it waited.
        const step = async (name: string, work: () => Promise<unknown> | undefined) => {
          const started = performance.now();
          await work();
          deps.log.debug({ step: name, ms: Math.round(performance.now() - started) }, "shutdown step done");
        };
        // Tickers first: a tick may dispatch to an agent or write to the database.
        await step("tickers", () => tickers?.stop());
        // Agents next: their sockets would hold server.close() open, and their last work needs the db.
        await step("agent channel", () => channel.close());
        // Log lines buffered by the reports are stored once no agent can add more.
        await step("job reports", () => reports.close());
        // Open job-page streams would hold server.close() open; browsers reconnect to the next server.
        await step("job streams", () => jobStreams.close());
        upgrades.detach();
        await step(
          "http server",
          () =>
            new Promise<void>((resolve) => {
              server.close(() => resolve());
              if ("closeAllConnections" in server) {
                if (options.dropConnections === "all") {
                  server.closeAllConnections();
                } else {
                  server.closeIdleConnections();
                }
              }
            }),
        );
        // Attempts in flight still record their outcome; the rest stays queued for the next start.
        await step("release", () => options.release?.());
      })();
      return closing;
    },
  };
}
