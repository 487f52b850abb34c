/**
 * @module jobs/cluster-job-events
 * The job-events port for replicas sharing one PostgreSQL: listeners here hear the events of
 * every replica, so a browser's job page shows live progress and logs whichever replica it
 * reached while the agent is connected to another. Emit calls this replica's listeners at once
 * (as in process) and publishes the event on the cluster bus when another replica is alive (a lone
 * server on PostgreSQL sends no NOTIFY per log line); events from other replicas are handed to
 * the listeners here in the order their replica emitted them.
 */
import type { ClusterBus } from "../hub/cluster-bus.js";
import type { Logger } from "../log.js";
import { createInProcessJobEvents } from "./in-process-job-events.js";
import type { JobEventMap, JobEventName, JobEvents } from "./job-events.js";

const CHANNEL = "job_events";
const NAMES: ReadonlySet<string> = new Set<JobEventName>(["job.updated", "job.log", "job.finished"]);
/** Date fields of the events, sent as ISO strings. */
const DATE_FIELDS = ["startedAt", "ts", "finishedAt"] as const;

export interface ClusterJobEvents extends JobEvents {
  /** Stops hearing other replicas. */
  close(): Promise<void>;
}

interface Published {
  from: string;
  name: JobEventName;
  event: Record<string, unknown>;
}

function isPublished(message: unknown): message is Published {
  if (typeof message !== "object" || message === null) {
    return false;
  }
  const { from, name, event } = message as Partial<Published>;
  return (
    typeof from === "string" &&
    typeof name === "string" &&
    NAMES.has(name) &&
    typeof event === "object" &&
    event !== null &&
    typeof event.jobId === "string" &&
    typeof event.hostId === "string"
  );
}

function revive(event: Record<string, unknown>): Record<string, unknown> {
  const out = { ...event };
  for (const field of DATE_FIELDS) {
    const value = out[field];
    if (typeof value === "string") {
      out[field] = new Date(value);
    }
  }
  return out;
}

export async function createClusterJobEvents(options: {
  bus: ClusterBus;
  replicaId: string;
  log: Logger;
  /** False while no other replica is alive: events then stay in process (no NOTIFY per log line). */
  hasPeers: () => boolean;
}): Promise<ClusterJobEvents> {
  const { bus, replicaId, log, hasPeers } = options;
  const local = createInProcessJobEvents();
  const stop = await bus.subscribe(CHANNEL, (message) => {
    if (!isPublished(message)) {
      log.warn("malformed job event from another replica dropped");
      return;
    }
    if (message.from === replicaId) {
      return;
    }
    const errors = local.emit(
      message.name,
      revive(message.event) as unknown as JobEventMap[typeof message.name],
    );
    for (const err of errors) {
      log.error({ err, job_id: message.event.jobId }, "job event listener failed");
    }
  });
  return {
    on: local.on,
    listenerCount: local.listenerCount,
    emit(name, event) {
      if (hasPeers()) {
        // A live log line is stored anyway: under a flood it may be lost on the way, not queued.
        bus.publish(CHANNEL, { from: replicaId, name, event }, { lossy: name === "job.log" });
      }
      return local.emit(name, event);
    },
    close: stop,
  };
}
