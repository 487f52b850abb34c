/**
 * @module agent-channel/channel-context
 * What every agent session of one channel shares: the server's deps (with the in-process hub,
 * which the channel feeds), the per-host task queue, the job report sink and the timing options.
 */
import type { Timers } from "@fleetback/protocol";
import type { ServerDeps } from "../deps.js";
import type { LastSeenWriter } from "../hosts/last-seen-writer.js";
import type { LocalHub } from "../hub/local-hub.js";
import type { JobReports } from "../jobs/job-reports.js";
import type { KeyedQueue } from "./keyed-queue.js";

export type ChannelDeps = Pick<
  ServerDeps,
  "config" | "db" | "log" | "clock" | "ids" | "keys" | "notifier" | "agentBundles" | "jobEvents"
> & {
  hub: LocalHub;
};

export interface AgentChannelOptions {
  /** Default HELLO_DEADLINE_MS (10 s). */
  helloDeadlineMs?: number;
  /** Timers for the hello deadline and log flushes; tests inject their own. */
  timers?: Timers;
  /** How long `close()` waits for agents to answer the close frame before cutting them off. */
  closeGraceMs?: number;
  logFlushIntervalMs?: number;
  logBatchLines?: number;
}

export interface ChannelContext {
  deps: ChannelDeps;
  queue: KeyedQueue;
  reports: JobReports;
  /** Heartbeats' last_seen_at, written in batches. */
  lastSeen: LastSeenWriter;
  helloDeadlineMs: number;
  timers: Timers;
  /**
   * Set while the channel shuts down: sockets closing then leave their host here instead of
   * queueing one offline mark each, and the channel marks them all in one statement at the end
   * (2,000 agents took 10 s of queued single updates before the server could exit).
   */
  closingHosts: Set<string> | undefined;
}
