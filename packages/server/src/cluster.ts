/**
 * @module cluster
 * What a server needs to run as one of several replicas on one PostgreSQL: its replica id, the
 * bus to the other replicas, the cluster hub and the cluster job events, started together and
 * closed in order (after the agent channel, so the last sockets' rows are removed first).
 */
import type { Database, PubSub } from "@fleetback/db";
import { createClusterBus } from "./hub/cluster-bus.js";
import { type ClusterHub, createClusterHub } from "./hub/cluster-hub.js";
import type { Ids } from "./ids.js";
import { type ClusterJobEvents, createClusterJobEvents } from "./jobs/cluster-job-events.js";
import type { Logger } from "./log.js";

export interface Cluster {
  replicaId: string;
  hub: ClusterHub;
  jobEvents: ClusterJobEvents;
  close(): Promise<void>;
}

export interface ClusterOptions {
  db: Database;
  pubsub: PubSub;
  ids: Pick<Ids, "ulid">;
  log: Logger;
  heartbeatMs?: number;
  replicaTtlMs?: number;
}

export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const replicaId = options.ids.ulid(new Date());
  const log = options.log.child({ replica_id: replicaId });
  const bus = createClusterBus({
    db: options.db,
    pubsub: options.pubsub,
    ids: options.ids,
    log,
    now: () => new Date(),
  });
  // Job events listen before the hub announces this replica, so no event sent to it is missed.
  let hub: ClusterHub | undefined;
  const jobEvents = await createClusterJobEvents({
    bus,
    replicaId,
    log,
    hasPeers: () => hub?.hasPeers() ?? false,
  });
  const started = await createClusterHub({
    db: options.db,
    bus,
    ids: options.ids,
    log,
    replicaId,
    ...(options.heartbeatMs === undefined ? {} : { heartbeatMs: options.heartbeatMs }),
    ...(options.replicaTtlMs === undefined ? {} : { replicaTtlMs: options.replicaTtlMs }),
  });
  hub = started;

  let closing: Promise<void> | undefined;
  log.info("joined the cluster: agents on other replicas are reached through PostgreSQL");
  return {
    replicaId,
    hub: started,
    jobEvents,
    close() {
      closing ??= (async () => {
        await jobEvents.close();
        await started.close();
        await bus.flush();
      })();
      return closing;
    },
  };
}
